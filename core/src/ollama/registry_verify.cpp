#include "mlens/ollama/registry_verify.h"

#include <algorithm>
#include <map>
#include <optional>

#include "mlens/io/checked_math.h"
#include "mlens/ollama/blob_hash.h"
#include "mlens/remote/http_client.h"
#include "mlens/text/number_format.h"
#include "mlens/text/plural.h"

namespace mlens {

bool RegistryVerification::ok() const {
    return std::all_of(blobs.begin(), blobs.end(), [](const RegistryBlobCheck& b) { return bool(b.result); });
}

size_t RegistryVerification::mismatched() const {
    return static_cast<size_t>(std::count_if(blobs.begin(), blobs.end(), [](const RegistryBlobCheck& b) {
        return !b.result && b.result.error().code == ErrorCode::E_DIGEST_MISMATCH;
    }));
}

std::string RegistryBlobCheck::verdict() const {
    if (result) return "ok";
    const ErrorCode code = result.error().code;
    return code == ErrorCode::E_DIGEST_MISMATCH ? "MISMATCH" : std::string(code_name(code));
}

std::string RegistryVerification::verdict_text() const {
    if (ok())
        return "ok, " + plural(blobs.size(), "blob matches its digest", "blobs match their digests") + " (" + human_bytes(bytes_hashed) +
            " hashed)";
    const size_t failed =
        static_cast<size_t>(std::count_if(blobs.begin(), blobs.end(), [](const RegistryBlobCheck& b) { return !b.result; }));
    std::string text = "rejected";
    if (mismatched()) text += ", " + std::to_string(mismatched()) + " of " + plural(blobs.size(), "blob") + " do not match their digests";
    if (failed > mismatched()) text += ", " + std::to_string(failed - mismatched()) + " could not be checked";
    return text;
}

namespace {

// The blob of one layer, opened and hashed; `done` is what earlier blobs hashed (for progress).
Status check_blob(const RegistryManifest& registry, const ManifestLayer& layer, uint64_t done, uint64_t total, JobContext* job,
                  RegistryBlobCheck& out) {
    if (!layer.blob)
        return Error{ErrorCode::E_BAD_DIGEST, layer.field + ".digest", std::nullopt, "not a sha256 digest; the blob is not fetched"};
    // What the registry serves now, never the range cache: a cached range is trusted on the
    // server's validator alone, and verifying is what checks the bytes.
    RemoteOptions uncached = registry.blob_options;
    uncached.cache = nullptr;
    const std::string url = registry.blob_url(*layer.blob);
    auto source = open_remote(url, uncached, job);
    if (!source) return source.error();
    // Bytes that are not the blob's are dropped from the cache, so that later reads fetch them again.
    auto forget = [&] {
        if (registry.blob_options.cache) registry.blob_options.cache->forget(url);
    };
    if ((*source)->size() != layer.size) {
        forget();
        return Error{
            ErrorCode::E_SIZE_MISMATCH, layer.field + ".size", std::nullopt,
            "the layer says " + std::to_string(layer.size) + " bytes; the registry's blob has " + std::to_string((*source)->size())};
    }
    auto progress = [&](uint64_t bytes) {
        if (total) job_report(job, static_cast<double>(done + bytes) / static_cast<double>(total));
    };
    auto hash = sha256_source(**source, job, progress);
    if (!hash) return hash.error();
    out.actual = "sha256:" + hash->hex;
    if (hash->hex != layer.blob->hex) {
        forget();
        return Error{ErrorCode::E_DIGEST_MISMATCH, layer.field + ".digest", std::nullopt,
                     "expected " + layer.blob->text() + " actual " + out.actual};
    }
    return ok_status();
}

// For each layer, the index of the first layer that names the same blob (digest and size): its
// own index when no layer before it does. A blob several layers name is fetched once.
std::vector<size_t> first_naming(const std::vector<const ManifestLayer*>& layers) {
    std::map<std::pair<std::string, uint64_t>, size_t> first;
    std::vector<size_t> out;
    for (size_t i = 0; i < layers.size(); ++i)
        out.push_back(first.emplace(std::make_pair(layers[i]->digest, layers[i]->size), i).first->second);
    return out;
}

// What verifying fetches: each blob once, and no layer whose digest is not sha256 (never
// fetched). nullopt past 2^64 bytes.
std::optional<uint64_t> bytes_to_fetch(const std::vector<const ManifestLayer*>& layers, const std::vector<size_t>& first) {
    std::optional<uint64_t> total = 0;
    for (size_t i = 0; i < layers.size(); ++i)
        if (first[i] == i && layers[i]->blob && total) total = checked_add(*total, layers[i]->size);
    return total;
}

// The answer a blob checked for an earlier layer gives `field`, another layer naming it: an error
// on a field of the earlier layer ("layers[4].digest") is on the same field of this one.
Status answer_for(const RegistryBlobCheck& checked, const std::string& field) {
    if (checked.result) return ok_status();
    Error e = checked.result.error();
    if (e.field.starts_with(checked.field + ".")) e.field = field + e.field.substr(checked.field.size());
    return e;
}

}  // namespace

Result<RegistryVerification> verify_registry_model(const RegistryReference& reference, JobContext* job) {
    auto registry = fetch_registry_manifest(reference, job);
    if (!registry) return registry.error();
    // A manifest that names no weights is no model, whatever its blobs hold (as at an open).
    if (std::none_of(registry->manifest.layers.begin(), registry->manifest.layers.end(),
                     [](const ManifestLayer& l) { return l.kind == LayerKind::model || l.kind == LayerKind::tensor; }))
        return Error{ErrorCode::E_NO_MODEL_LAYER, "layers", std::nullopt,
                     "ollama://" + reference.name.display() + ": no model or tensor layer"};
    std::vector<const ManifestLayer*> layers;
    if (registry->manifest.has_config) layers.push_back(&registry->manifest.config);
    for (const ManifestLayer& layer : registry->manifest.layers) layers.push_back(&layer);
    const std::vector<size_t> first = first_naming(layers);
    const std::optional<uint64_t> total = bytes_to_fetch(layers, first);
    const uint64_t left = download_budget_left();
    if (!total || *total > left)
        return Error{ErrorCode::E_DOWNLOAD_LIMIT, "", std::nullopt,
                     "verifying reads every blob whole: " + (total ? human_bytes(*total) : std::string("more than 2^64 bytes")) +
                         ", past the " + human_bytes(left) + " the download limit has left (--max-download)"};

    ScopedTransferJob transfers(job);  // a cancel stops the fetch under way, not only the next read
    RegistryVerification out;
    out.repository = registry->repository;
    out.manifest_digest = registry->digest;
    TransferBatch blobs("blob");
    for (size_t i = 0; i < layers.size(); ++i) {
        const ManifestLayer* layer = layers[i];
        RegistryBlobCheck check{layer->field, layer->media_type, layer->digest, layer->size, "", ok_status()};
        if (first[i] != i) {
            check.actual = out.blobs[first[i]].actual;
            check.result = answer_for(out.blobs[first[i]], layer->field);
        } else if (const std::optional<Error> skipped = blobs.skipped()) {
            check.result = *skipped;
        } else {
            check.result = check_blob(*registry, *layer, out.bytes_hashed, *total, job, check);
            if (!check.actual.empty()) out.bytes_hashed += layer->size;
        }
        if (!check.result) {
            if (check.result.error().code == ErrorCode::E_CANCELLED) return check.result.error();
            blobs.note(check.result.error());
        }
        out.blobs.push_back(std::move(check));
    }
    return out;
}

}  // namespace mlens
