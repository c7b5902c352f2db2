#include "mlens/ollama/store_listing.h"

#include <algorithm>
#include <unordered_map>

#include "mlens/ollama/digest_index.h"
#include "mlens/ollama/manifest_view.h"
#include "store_check_manifests.h"
#include "store_loadability.h"

namespace mlens {

size_t StoreListing::error_count() const {
    size_t n = static_cast<size_t>(
        std::count_if(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::error; }));
    return n + static_cast<size_t>(std::count_if(models.begin(), models.end(), [](const ModelListing& m) { return !m.ok(); }));
}

BlobFilesSummary StoreListing::blob_summary() const {
    BlobFilesSummary s;
    uint64_t unreferenced = 0;
    for (const ListedBlobFile& b : blob_files) {
        switch (b.file.kind.kind) {
            case BlobFileKind::blob:
                ++s.blobs;
                s.bytes += b.file.size;
                unreferenced += !b.referenced;
                break;
            case BlobFileKind::partial:
            case BlobFileKind::partial_part:
                ++s.partial;
                break;
            case BlobFileKind::temporary:
                ++s.temporary;
                break;
            case BlobFileKind::legacy_name:
                ++s.legacy;
                break;
            case BlobFileKind::other:
                ++s.other;
                break;
        }
    }
    if (references_known) s.unreferenced = unreferenced;
    return s;
}

namespace {

// Sorted by full name (ModelName's order), each name spelled out once rather than per comparison.
void sort_by_name(std::vector<ModelListing>& models) {
    std::vector<std::pair<std::string, size_t>> keys;
    keys.reserve(models.size());
    for (size_t i = 0; i < models.size(); ++i) keys.emplace_back(models[i].ref.name.full(), i);
    std::sort(keys.begin(), keys.end());
    std::vector<ModelListing> sorted;
    sorted.reserve(models.size());
    for (const auto& key : keys) sorted.push_back(std::move(models[key.second]));
    models = std::move(sorted);
}

}  // namespace

Partial<StoreListing> list_store(const Store& store, const StoreCheckOptions& options, JobContext* job) {
    Partial<StoreListing> listed;
    StoreListing& out = listed.value;
    out.root = store.root();
    std::vector<StoredManifest> manifests;  // per model, read once by the check
    std::vector<BlobFile> blob_files;  // blobs/, listed once by the check
    Partial<StoreCheckReport> checked = check_store_keeping_manifests(store, options, job, manifests, &blob_files);
    StoreCheckReport& report = checked.value;
    out.diagnostics = std::move(report.store_diagnostics);
    out.digests_verified = report.digests_verified;
    const bool every_manifest_seen = report.manifests_complete;
    if (!checked.complete()) {
        listed.stopped_by = std::move(checked.stopped_by);
        return listed;
    }
    // Which blob files the manifests name: the files by the digest their name spells (a blob and
    // its legacy name share one), each digest a layer names looked up among them. Sized by the
    // files, not by the layers, which may name the same few blobs many times over.
    DigestIndex file_digests(blob_files.size());
    std::vector<uint32_t> digest_of_file(blob_files.size(), DigestIndex::kNoValue);
    for (size_t i = 0; i < blob_files.size(); ++i) {
        const BlobFileName& kind = blob_files[i].kind;
        if (kind.kind != BlobFileKind::blob && kind.kind != BlobFileKind::legacy_name) continue;
        if (std::optional<Sha256Bytes> key = sha256_bytes(kind.hex_in(blob_files[i].name)))
            digest_of_file[i] = file_digests.insert(*key, static_cast<uint32_t>(file_digests.size())).first;
    }
    std::vector<uint8_t> digest_referenced(file_digests.size());
    const auto reference = [&](const BlobDigest& digest) {
        if (std::optional<Sha256Bytes> key = sha256_bytes(digest.hex))
            if (std::optional<uint32_t> named = file_digests.find(*key)) digest_referenced[*named] = 1;
    };
    // Configs are shared by many models: each distinct one is read and parsed once.
    std::unordered_map<std::string, Result<ModelConfig>> configs;
    StoreLoadability loadability(store, options.cache);
    out.models.reserve(report.models.size());
    for (size_t i = 0; i < report.models.size(); ++i) {
        if (job_cancelled(job)) {
            listed.stopped_by = cancelled_error("listing");
            break;
        }
        ModelCheck& check = report.models[i];
        const StoredManifest& stored = manifests[i];
        ModelListing row;
        row.ref = stored.ref;
        row.ref.path = check.manifest_path;
        if (stored.found) {
            const Manifest& m = stored.manifest;
            row.size = m.total_size();
            if (m.has_config && m.config.blob) reference(*m.config.blob);
            for (const ManifestLayer& l : m.layers)
                if (l.blob) reference(*l.blob);
            // What the config says is shown even for a model whose blobs are broken; the config's
            // own problems are among the check's reasons.
            const Result<ModelConfig>* config = nullptr;
            if (m.has_config && m.config.blob) {
                auto [known, first] = configs.try_emplace(m.config.blob->hex, ModelConfig{});
                if (first) known->second = read_model_config(store, m);
                config = &known->second;
            }
            if (config && *config) {
                row.family = (*config)->model_family;
                row.parameter_size = (*config)->model_type;
                row.quantization = (*config)->file_type;
            }
            row.format = model_format(m, config && *config ? &**config : nullptr);
        } else {
            // A manifest that was not read shows no time or size, whatever the scan saw.
            row.ref.modified = 0;
            row.ref.file_size = 0;
        }
        if (check.verdict() != Verdict::errors) {
            std::optional<OpenedModelFacts> facts = loadability.known(stored, check);
            if (!facts && !options.cached_only) facts = loadability.assess(stored, check);
            if (facts) {
                row.loads = std::move(facts->loads);
                row.parameters = facts->parameters;
            }
        }
        row.check = std::move(check);
        out.models.push_back(std::move(row));
    }
    if (!listed.stopped_by) loadability.finish();
    out.references_known =
        !listed.stopped_by && every_manifest_seen &&
        std::none_of(out.diagnostics.begin(), out.diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::error; }) &&
        std::all_of(manifests.begin(), manifests.end(), [](const StoredManifest& m) { return m.valid(); });
    sort_by_name(out.models);
    out.blob_files.reserve(blob_files.size());
    for (size_t i = 0; i < blob_files.size(); ++i) {
        const bool used = digest_of_file[i] != DigestIndex::kNoValue && digest_referenced[digest_of_file[i]];
        out.blob_files.push_back({std::move(blob_files[i]), used});
    }
    job_report(job, 1.0);
    return listed;
}

}  // namespace mlens
