#include "store_loadability.h"

#include <vector>

#include "mlens/io/cache_database.h"
#include "mlens/model/summary.h"
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

// The cache entry's text of `facts`, and back (nullopt for any other text).
std::string entry_text(const OpenedModelFacts& facts) {
    nlohmann::json j = loadability_json(facts.loads);
    if (facts.parameters) j["parameters"] = *facts.parameters;
    return j.dump();
}

std::optional<OpenedModelFacts> facts_of_entry(std::string_view text) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    std::optional<Loadability> loads = loadability_from_json(j);
    if (!loads) return std::nullopt;
    OpenedModelFacts facts{std::move(*loads), std::nullopt};
    if (const auto parameters = j.find("parameters"); parameters != j.end()) {
        if (!parameters->is_number_unsigned()) return std::nullopt;
        facts.parameters = parameters->get<uint64_t>();
    }
    return facts;
}

}  // namespace

const CachedEntries& StoreLoadability::entries(CacheKind kind, uint64_t device) {
    auto [it, first] = m_entries.try_emplace({kind, device});
    if (first) it->second = read_cached_entries(*m_cache, kind, device);
    return it->second;
}

std::optional<OpenedModelFacts> StoreLoadability::known(const StoredManifest& manifest, const ModelCheck& check) {
    if (!m_cache || !m_cache->enabled() || !manifest.found || check.verdict() == Verdict::errors || !check.digests_known ||
        check.unverified != 0)
        return std::nullopt;
    const std::optional<std::string_view> value =
        entries(CacheKind::model_loadability, manifest.stamp.device).find(manifest.stamp, kDetail);
    if (!value) return std::nullopt;
    auto [decoded, first] = m_decoded.try_emplace(*value);
    if (first) decoded->second = facts_of_entry(*value);
    return decoded->second;
}

uint32_t StoreLoadability::named_blob(const BlobDigest& digest) {
    auto [it, first] = m_named_index.try_emplace(digest.hex, static_cast<uint32_t>(m_named.size()));
    if (!first) return it->second;
    if (!m_blobs) m_blobs = open_blob_directory(m_store);
    NamedBlob named{digest, {}, false};
    const BlobLookup found = find_blob_in(m_store, *m_blobs, digest);
    if (found.found()) {
        named.before = found.stamp();
        const std::optional<std::string_view> hex = entries(CacheKind::blob_digest, found.device).find(found.stamp(), "sha256");
        named.verified = hex && *hex == digest.hex;
    }
    m_named.push_back(std::move(named));
    return it->second;
}

std::optional<OpenedModelFacts> StoreLoadability::assess(const StoredManifest& manifest, const ModelCheck& check) {
    // Each named blob's stamp, taken before this open (or an earlier one), when the cache vouches
    // that it holds the content its digest names.
    bool verified = m_cache && m_cache->enabled() && manifest.found && check.digests_known;
    KeptVerdict kept;
    if (verified)
        for (const BlobDigest* blob : named_blobs(manifest.manifest)) {
            const uint32_t at = named_blob(*blob);
            if (!m_named[at].verified) {
                verified = false;
                break;
            }
            kept.blobs.push_back(at);
        }
    auto model = open_store_model(m_store, check.name);
    if (!model) return std::nullopt;
    OpenedModelFacts facts{assess_loadability(*model), summarize(*model).parameter_count()};
    if (verified) {
        kept.manifest_path = check.manifest_path;
        kept.manifest = manifest.stamp;
        kept.value = &*m_kept_values.insert(entry_text(facts)).first;
        m_kept.push_back(std::move(kept));
    }
    return facts;
}

void StoreLoadability::finish() {
    if (m_kept.empty()) return;
    // blobs/ opened again: a blobs/ replaced meanwhile shows its own files' stamps. Each blob is
    // looked up once (0: not yet, 1: unchanged, 2: changed or gone).
    const BlobDirectory now = open_blob_directory(m_store);
    std::vector<uint8_t> state(m_named.size(), 0);
    for (const KeptVerdict& kept : m_kept) {
        bool unchanged = file_stamp(m_store.path_of(kept.manifest_path)) == kept.manifest;
        for (size_t i = 0; unchanged && i < kept.blobs.size(); ++i) {
            uint8_t& s = state[kept.blobs[i]];
            if (s == 0) {
                const NamedBlob& named = m_named[kept.blobs[i]];
                const BlobLookup found = find_blob_in(m_store, now, named.digest);
                s = found.found() && found.stamp() == named.before ? 1 : 2;
            }
            unchanged = s == 1;
        }
        if (unchanged) m_cache->store(CacheKind::model_loadability, kept.manifest, kDetail, *kept.value);
    }
    m_kept.clear();
    m_kept_values.clear();
}

}  // namespace mlens
