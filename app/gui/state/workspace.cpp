#include "workspace.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "mlens/ollama/registry_view.h"
#include "mlens/open/target.h"
#include "mlens/remote/http_client.h"
#include "mlens/remote/remote_url.h"
#include "mlens/text/escape.h"

namespace mlens {

// What the open job hands back: the parsed document, or how it failed, with the parse time.
struct OpenOutcome {
    DocumentContent content;  // empty when the open failed
    Error error;
    bool cancelled = false;
    double parse_ms = 0.0;
};

namespace {

// Absolute and normalized, without a trailing separator: "models/llama/" (as shell completion
// and some drag sources give folders) is the same document as "models/llama", titled "llama".
std::string absolute_path(const std::string& path) {
    if (is_remote_reference(path)) return path;
    std::error_code ec;
    auto abs = std::filesystem::absolute(path, ec);
    if (ec) return path;
    abs = abs.lexically_normal();
    if (!abs.has_filename() && abs.has_relative_path()) abs = abs.parent_path();
    return abs.string();
}

}  // namespace

Document& Workspace::open(const std::string& raw_path) {
    // The one resolver of the command line tool decides what the text names; a store model is
    // addressed by its manifest file, so a reference and its manifest are the same document.
    // A remote reference is resolved inside the open job: resolving it fetches its first bytes.
    const bool remote = is_remote_reference(raw_path) && !std::filesystem::exists(raw_path);
    Target target;
    if (remote) {
        target.text = raw_path;
        target.path = display_url(raw_path);
    } else {
        target = resolve(raw_path);
    }
    std::string path = absolute_path(target.path);
    for (auto& doc : m_documents) {
        if (doc->path != path) continue;
        if (doc->state != DocumentState::failed) {
            m_active = doc->id;
            return *doc;
        }
        // A failed document is replaced by a new attempt.
        close(doc->id);
        break;
    }
    auto doc = std::make_unique<Document>();
    doc->id = m_next_id++;
    doc->path = path;
    doc->title = escape_for_display(std::filesystem::path(path).filename().string(), 60);
    std::string job_name = "open " + doc->title;
    if (target.kind == TargetKind::store_model) doc->title = store_model_title(target.name);
    if (target.kind == TargetKind::store_root) doc->title = "Ollama store \xC2\xB7 " + doc->title;
    if (target.kind == TargetKind::imatrix) doc->title = "imatrix \xC2\xB7 " + doc->title;
    JobHandle<OpenOutcome> job = m_jobs.start(job_name, [target = std::move(target), remote](JobContext& ctx) mutable -> Result<OpenOutcome> {
        OpenOutcome out;
        // Cancel stops a transfer of this open, even one a ByteSource read started.
        const ScopedTransferJob transfers(&ctx);
        if (remote) target = resolve(target.text);
        auto t0 = std::chrono::steady_clock::now();
        auto elapsed = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
        auto fail = [&](const Error& e) {
            out.cancelled = e.code == ErrorCode::E_CANCELLED;
            out.error = e;
            return std::move(out);
        };
        if (target.kind == TargetKind::store_root) {
            Result<StoreDocument> opened = open_store_document(*target.store, &ctx);
            out.parse_ms = elapsed();
            if (!opened) return fail(opened.error());
            out.content = std::make_shared<const StoreDocument>(std::move(opened).value());
            return out;
        }
        if (target.kind == TargetKind::imatrix) {
            Result<Imatrix> opened = read_imatrix(target.source);
            out.parse_ms = elapsed();
            if (!opened) return fail(opened.error());
            out.content = ImatrixDocument{std::make_shared<const Imatrix>(std::move(opened).value())};
            return out;
        }
        // A registry's model: its manifest is fetched once, for the model and for the view of
        // the Ollama panel, so that the two never show two versions of it.
        std::shared_ptr<const ManifestView> registry_view;
        auto open = [&]() -> Result<Model> {
            if (target.kind != TargetKind::registry_model) return open_target(target, &ctx);
            const RegistryReference reference{target.registry, target.name};
            Result<RegistryManifest> registry = fetch_registry_manifest(reference, &ctx);
            if (!registry) return registry.error();
            registry_view = std::make_shared<const ManifestView>(view_registry_model(reference, *registry, &ctx));
            return open_fetched_registry_model(reference, *registry, *registry_view, &ctx);
        };
        // Indexing (a scan of the vocabulary) reports the second half of the progress.
        Result<Model> model = open();
        out.parse_ms = elapsed();
        if (!model) return fail(model.error());
        ctx.report(0.5);
        DocumentIndex index = build_document_index(*model, &ctx);
        if (ctx.cancelled()) {
            out.cancelled = true;
            return out;
        }
        out.content = ModelDocument{std::make_shared<const Model>(std::move(model).value()),
                                    std::make_shared<const DocumentIndex>(std::move(index)), std::move(registry_view)};
        return out;
    });
    doc->job = job.job();
    m_pending.push_back({doc->id, std::move(job)});
    m_active = doc->id;
    m_documents.push_back(std::move(doc));
    return *m_documents.back();
}

void Workspace::close(uint64_t id) {
    auto it = std::find_if(m_documents.begin(), m_documents.end(), [id](const auto& d) { return d->id == id; });
    if (it == m_documents.end()) return;
    if ((*it)->job) (*it)->job->cancel();
    std::erase_if(m_pending, [id](const Pending& p) { return p.id == id; });
    size_t pos = static_cast<size_t>(it - m_documents.begin());
    m_documents.erase(it);
    if (m_active == id) {
        m_active = 0;
        if (!m_documents.empty()) m_active = m_documents[std::min(pos, m_documents.size() - 1)]->id;
    }
}

bool Workspace::poll() {
    bool changed = false;
    std::vector<uint64_t> cancelled;
    for (auto it = m_pending.begin(); it != m_pending.end();) {
        Document* doc = find(it->id);
        std::optional<Result<OpenOutcome>> taken = doc ? it->job.try_take() : std::nullopt;
        if (!taken) {
            ++it;
            continue;
        }
        if (!*taken) {  // the job itself failed (out of memory): the document did not open
            doc->state = DocumentState::failed;
            doc->error = escape_for_display(taken->error().message, 400);
            doc->error_code = taken->error().code;
            doc->job.reset();
            it = m_pending.erase(it);
            changed = true;
            continue;
        }
        OpenOutcome& out = taken->value();
        doc->parse_ms = out.parse_ms;
        if (out.cancelled) {
            cancelled.push_back(doc->id);
        } else if (!std::holds_alternative<std::monostate>(out.content)) {
            doc->content = std::move(out.content);
            doc->state = DocumentState::ready;
            doc->selection = {SelectionKind::header, 0};
            m_settings.add_recent(doc->path);
        } else {
            doc->state = DocumentState::failed;
            doc->error = escape_for_display(out.error.message, 400);
            doc->error_code = out.error.code;
        }
        doc->job.reset();
        it = m_pending.erase(it);
        changed = true;
    }
    for (uint64_t id : cancelled) close(id);
    return changed;
}

Document* Workspace::find(uint64_t id) {
    for (auto& d : m_documents)
        if (d->id == id) return d.get();
    return nullptr;
}

bool Workspace::opening() const {
    return std::any_of(m_documents.begin(), m_documents.end(), [](const auto& d) { return d->state == DocumentState::opening; });
}

std::vector<std::string> gguf_files_in(const std::string& dir) {
    std::vector<std::string> out;
    if (dir.empty()) return out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const auto& entry = *it;
        std::error_code type_ec;
        if (entry.path().extension() == ".gguf" && entry.is_regular_file(type_ec)) out.push_back(entry.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> demo_documents(const std::string& dir) {
    std::vector<std::string> out;
    if (dir.empty()) return out;
    std::string store = (std::filesystem::path(dir) / "ollama-store").string();
    if (is_store_root(store)) out.push_back(store);
    for (std::string& f : gguf_files_in(dir)) out.push_back(std::move(f));
    return out;
}

}  // namespace mlens
