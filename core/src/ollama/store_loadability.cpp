#include "store_loadability.h"

#include <vector>

#include "mlens/io/cache_database.h"
#include "mlens/ollama/store_model.h"

namespace mlens {

namespace {

constexpr std::string_view kDetail = "loads";

// The digests of every blob the manifest names: its config and each layer with a valid digest.
std::vector<const BlobDigest*> named_blobs(const Manifest& manifest) {
    std::vector<const BlobDigest*> out;
    if (manifest.has_config && manifest.config.blob) out.push_back(&*manifest.config.blob);
    for (const ManifestLayer& l : manifest.layers)
        if (l.blob) out.push_back(&*l.blob);
    return out;
}

}  // namespace

const CachedEntries& StoreLoadability::entries(CacheKind kind, uint64_t device) {
    auto [it, first] = m_entries.try_emplace({kind, device});
    if (first) it->second = read_cached_entries(*m_cache, kind, device);
    return it->second;
}

std::optional<Loadability> StoreLoadability::known(const StoredManifest& manifest, const ModelCheck& check) {
    if (!m_cache || !m_cache->enabled() || !manifest.found || check.verdict() == Verdict::errors || !check.digests_known ||
        check.unverified != 0)
        return std::nullopt;
    const std::optional<std::string_view> value =
        entries(CacheKind::model_loadability, manifest.stamp.device).find(manifest.stamp, kDetail);
    if (!value) return std::nullopt;
    auto [decoded, first] = m_decoded.try_emplace(*value);
    if (first) decoded->second = loadability_from_json(nlohmann::json::parse(*value, nullptr, false));
    return decoded->second;
}

std::optional<Loadability> StoreLoadability::assess(const StoredManifest& manifest, const ModelCheck& check) {
    // The stamps of the named blobs, when each holds the content its digest names.
    std::vector<FileStamp> before;
    bool verified = m_cache && m_cache->enabled() && manifest.found && check.digests_known;
    const std::vector<const BlobDigest*> blobs = named_blobs(manifest.manifest);
    if (verified && !m_blobs) m_blobs = open_blob_directory(m_store);
    for (size_t i = 0; verified && i < blobs.size(); ++i) {
        const BlobLookup found = find_blob_in(m_store, *m_blobs, *blobs[i]);
        const std::optional<std::string_view> hex =
            found.found() ? entries(CacheKind::blob_digest, found.device).find(found.stamp(), "sha256") : std::nullopt;
        verified = hex && *hex == blobs[i]->hex;
        before.push_back(found.stamp());
    }
    auto model = open_store_model(m_store, check.name);
    if (!model) return std::nullopt;
    Loadability verdict = assess_loadability(*model);
    if (!verified || file_stamp(m_store.root() + "/" + check.manifest_path) != manifest.stamp) return verdict;
    // blobs/ opened again: a blobs/ replaced during the open shows its own files' stamps.
    const BlobDirectory now = open_blob_directory(m_store);
    for (size_t i = 0; i < blobs.size(); ++i) {
        const BlobLookup found = find_blob_in(m_store, now, *blobs[i]);
        if (!found.found() || found.stamp() != before[i]) return verdict;
    }
    m_cache->store(CacheKind::model_loadability, manifest.stamp, kDetail, loadability_json(verdict).dump());
    return verdict;
}

}  // namespace mlens
