#include "mlens/ollama/store_listing.h"

#include <algorithm>
#include <unordered_set>

#include "mlens/ollama/manifest_view.h"

namespace mlens {

bool ModelListing::ok() const {
    return std::none_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
}

StoreListing list_store(const Store& store, JobContext* job) {
    StoreListing out;
    out.root = store.root();
    StoreScan scan = store.scan(job);
    out.diagnostics = std::move(scan.diagnostics);
    std::unordered_set<std::string> referenced;
    for (size_t i = 0; i < scan.manifests.size(); ++i) {
        if (job_cancelled(job)) {
            out.cancelled = true;
            break;
        }
        job_report(job, static_cast<double>(i) / static_cast<double>(scan.manifests.size()));
        StoredManifest stored = store.read_manifest(scan.manifests[i]);
        ModelListing row;
        row.ref = stored.ref;
        for (const Diagnostic& d : stored.manifest.diagnostics) row.diagnostics.push_back(located(d, row.ref.path));
        if (stored.found) {
            const Manifest& m = stored.manifest;
            row.size = m.total_size();
            if (m.has_config && m.config.blob) referenced.insert(m.config.blob->hex);
            for (const ManifestLayer& l : m.layers)
                if (l.blob) referenced.insert(l.blob->hex);
            auto config = read_model_config(store, m);
            if (config) {
                row.family = config->model_family;
                row.parameter_size = config->model_type;
                row.quantization = config->file_type;
            } else if (m.has_config && m.config.blob) {
                const Error& e = config.error();
                Diagnostic d{Severity::error, "store", e.code, e.field, e.offset, e.message};
                row.diagnostics.push_back(e.offset ? d : located(d, row.ref.path));
            }
            row.format = model_format(m, config ? &*config : nullptr);
        }
        out.models.push_back(std::move(row));
    }
    std::sort(out.models.begin(), out.models.end(),
              [](const ModelListing& a, const ModelListing& b) { return a.ref.name < b.ref.name; });
    for (BlobFile& f : store.blob_files()) {
        bool used = (f.kind.kind == BlobFileKind::blob || f.kind.kind == BlobFileKind::legacy_name) && referenced.count(f.kind.hex);
        out.blob_files.push_back({std::move(f), used});
    }
    job_report(job, 1.0);
    return out;
}

}  // namespace mlens
