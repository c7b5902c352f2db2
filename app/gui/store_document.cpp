#include "store_document.h"

#include <filesystem>

#include "document.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace fs = std::filesystem;

bool is_store_root(const std::string& path) {
    std::error_code ec;
    return fs::is_directory(fs::path(path) / "manifests", ec) && fs::is_directory(fs::path(path) / "blobs", ec);
}

std::optional<StoreManifestPath> store_manifest_of(const std::string& path) {
    fs::path p = fs::path(path).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return std::nullopt;
    fs::path tag = p.filename(), model = p.parent_path().filename(), ns = p.parent_path().parent_path().filename();
    fs::path host_dir = p.parent_path().parent_path().parent_path();
    fs::path manifests = host_dir.parent_path();
    if (manifests.filename() != "manifests") return std::nullopt;
    std::string root = manifests.parent_path().string();
    if (!is_store_root(root)) return std::nullopt;
    ModelName name;
    name.host = host_dir.filename().string();
    name.name_space = ns.string();
    name.model = model.string();
    name.tag = tag.string();
    if (!name.valid()) return std::nullopt;
    return StoreManifestPath{root, name};
}

Result<StoreDocument> open_store_document(const std::string& path, JobContext* job) {
    Result<Store> store = Store::open(path);
    if (!store) return store.error();
    StoreListing listing = list_store(*store, kStructureCheck, job);
    if (listing.cancelled) return Error{"E_CANCELLED", "", std::nullopt, "cancelled"};
    return StoreDocument{std::move(store).value(), std::move(listing)};
}

void advance_digest_pass(Document& doc, JobRunner& jobs) {
    if (!doc.store) return;
    DigestPass& pass = *doc.store->digests;
    if (!pass.job) {
        auto report = std::make_shared<StoreCheckReport>();
        std::shared_ptr<const StoreDocument> store = doc.store;
        pass.report = report;
        pass.job = jobs.start("verify digests", [store, report](JobContext& jc) {
            *report = check_store(store->store, StoreCheckOptions{}, &jc);
        });
        return;
    }
    if (pass.applied || !pass.job->done() || pass.report->cancelled) return;
    auto updated = std::make_shared<StoreDocument>(*doc.store);
    apply_check(updated->listing, *pass.report);
    pass.applied = true;
    doc.store = std::move(updated);
}

std::string digest_pass_text(const StoreDocument& store) {
    const DigestPass& pass = *store.digests;
    if (!pass.job) return {};
    if (!pass.job->done()) return "verifying digests " + std::to_string(static_cast<int>(pass.job->progress() * 100)) + "%";
    if (pass.report->cancelled) return "digest pass cancelled; verdicts without digests";
    return "digests verified";
}

std::string store_model_title(const ModelName& name) { return escape_for_display(name.display(), 60) + " (Ollama)"; }

}  // namespace mlens
