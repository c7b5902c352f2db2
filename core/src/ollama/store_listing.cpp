#include "mlens/ollama/store_listing.h"

#include <algorithm>
#include <unordered_set>

#include "mlens/ollama/manifest_view.h"
#include "mlens/ollama/store_model.h"

namespace mlens {

size_t StoreListing::error_count() const {
    size_t n = static_cast<size_t>(
        std::count_if(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::error; }));
    return n + static_cast<size_t>(std::count_if(models.begin(), models.end(), [](const ModelListing& m) { return !m.ok(); }));
}

Partial<StoreListing> list_store(const Store& store, const StoreCheckOptions& options, JobContext* job) {
    Partial<StoreListing> listed;
    StoreListing& out = listed.value;
    out.root = store.root();
    Partial<StoreCheckReport> checked = check_store(store, options, job);
    StoreCheckReport& report = checked.value;
    out.diagnostics = std::move(report.store_diagnostics);
    out.digests_verified = report.digests_verified;
    if (!checked.complete()) {
        listed.stopped_by = std::move(checked.stopped_by);
        return listed;
    }
    std::unordered_set<std::string> referenced;
    for (ModelCheck& check : report.models) {
        if (job_cancelled(job)) {
            listed.stopped_by = cancelled_error("listing");
            break;
        }
        StoredManifest stored = store.read_manifest(check.name);
        ModelListing row;
        row.ref = stored.ref;
        row.ref.path = check.manifest_path;
        if (stored.found) {
            const Manifest& m = stored.manifest;
            row.size = m.total_size();
            if (m.has_config && m.config.blob) referenced.insert(m.config.blob->hex);
            for (const ManifestLayer& l : m.layers)
                if (l.blob) referenced.insert(l.blob->hex);
            // What the config says is shown even for a model whose blobs are broken; the config's
            // own problems are among the check's reasons.
            auto config = read_model_config(store, m);
            if (config) {
                row.family = config->model_family;
                row.parameter_size = config->model_type;
                row.quantization = config->file_type;
            }
            row.format = model_format(m, config ? &*config : nullptr);
        }
        if (check.verdict() != Verdict::errors && !options.cached_only)
            if (auto model = open_store_model(store, check.name)) row.loads = assess_loadability(*model);
        row.check = std::move(check);
        out.models.push_back(std::move(row));
    }
    std::sort(out.models.begin(), out.models.end(), [](const ModelListing& a, const ModelListing& b) { return a.ref.name < b.ref.name; });
    for (BlobFile& f : store.blob_files()) {
        bool used = (f.kind.kind == BlobFileKind::blob || f.kind.kind == BlobFileKind::legacy_name) && referenced.count(f.kind.hex);
        out.blob_files.push_back({std::move(f), used});
    }
    job_report(job, 1.0);
    return listed;
}

}  // namespace mlens
