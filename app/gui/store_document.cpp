#include "store_document.h"

#include <filesystem>

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
    StoreListing listing = list_store(*store, job);
    if (listing.cancelled) return Error{"E_CANCELLED", "", std::nullopt, "cancelled"};
    return StoreDocument{std::move(store).value(), std::move(listing)};
}

std::string store_model_title(const ModelName& name) { return escape_for_display(name.display(), 60) + " (Ollama)"; }

}  // namespace mlens
