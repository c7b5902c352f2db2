// The store check in three passes: manifests and blob resolution (cheap, metadata only), then
// hashing each distinct blob once, then parsing contents. Every finding is attributed to the
// models that reference the blob, so a shared corrupt blob fails every model using it.
// The manifests are read and parsed on the machine's cores, each once (the listing shows them
// from here), while blobs/ is listed and the cache read; a blob is resolved once per digest, in
// one blobs/ directory opened for the run, the digests in their sorted order (the listing's).
#include "mlens/ollama/store_check.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <string_view>

#include "mlens/formats/gguf_reader.h"
#include "mlens/io/cache_database.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/io/cache_entries.h"
#include "mlens/model/model_json.h"
#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/config_blob.h"
#include "mlens/ollama/digest_index.h"
#include "mlens/ollama/store_lookup.h"
#include "mlens/ollama/text_blob.h"
#include "mlens/text/digits.h"
#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"
#include "mlens/util/parallel.h"
#include "store_check_manifests.h"

namespace mlens {

namespace {

constexpr uint32_t kNoUse = UINT32_MAX;
constexpr uint32_t kNoState = UINT32_MAX;

struct BlobUse {
    size_t model;  // index into report.models
    const ManifestLayer* layer;  // in the checker's manifests, which hold every manifest the run reads
    uint32_t next = kNoUse;  // the blob's next use in the checker's array of every use
};

// A blob's uses, in the order the layers name it: a chain through the checker's array of every
// use (one array for the run instead of one per blob).
class UseChain {
public:
    class iterator {
    public:
        iterator(const std::vector<BlobUse>& all, uint32_t at) : m_all(&all), m_at(at) {}
        const BlobUse& operator*() const { return (*m_all)[m_at]; }
        iterator& operator++() {
            m_at = (*m_all)[m_at].next;
            return *this;
        }
        bool operator!=(const iterator& other) const { return m_at != other.m_at; }

    private:
        const std::vector<BlobUse>* m_all;
        uint32_t m_at;
    };
    UseChain(const std::vector<BlobUse>& all, uint32_t first) : m_all(all), m_first(first) {}
    iterator begin() const { return {m_all, m_first}; }
    iterator end() const { return {m_all, kNoUse}; }

private:
    const std::vector<BlobUse>& m_all;
    uint32_t m_first;
};

struct BlobState {
    const BlobLookup* lookup;  // in the checker's lookups by digest
    uint32_t first_use = kNoUse, last_use = kNoUse;  // its chain of uses
    bool digest_unknown = false;  // cached_only and the cache has no sha256 for it
    bool header_unknown = false;  // cached_only and the cache has no parse answer for one of its kinds
    // Per kind it was parsed as, what that found, when it found anything (a kind parsed without
    // findings is not kept: nothing to replay).
    std::vector<std::pair<LayerKind, std::vector<Diagnostic>>> findings;
};

// A blob's canonical path ends in its digest's hex digits, uniformly distributed: the last 16
// bytes are hash enough (a shorter path is hashed whole).
struct BlobPathHash {
    size_t operator()(std::string_view path) const {
        if (path.size() < 16) return std::hash<std::string_view>{}(path);
        uint64_t a = 0, b = 0;
        std::memcpy(&a, path.data() + path.size() - 16, 8);
        std::memcpy(&b, path.data() + path.size() - 8, 8);
        return static_cast<size_t>((a * 0x9E3779B97F4A7C15ull) ^ (b + (a >> 29)));
    }
};

// What parsing a blob as `kind` found, as the cache keeps it: the detail names the kind.
std::string header_detail(LayerKind kind) { return std::string("header:") + layer_kind_name(kind); }

std::string findings_text(const std::vector<Diagnostic>& findings) {
    nlohmann::json out = nlohmann::json::array();
    for (const Diagnostic& d : findings) out.push_back(diagnostic_to_json(d));
    return out.dump();
}

std::optional<std::vector<Diagnostic>> findings_of(std::string_view text) {
    if (text == "[]") return std::vector<Diagnostic>{};
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) return std::nullopt;
    std::vector<Diagnostic> out;
    for (const nlohmann::json& item : j) {
        std::optional<Diagnostic> d = diagnostic_from_json(item);
        if (!d) return std::nullopt;
        out.push_back(std::move(*d));
    }
    return out;
}

constexpr size_t kManifestsPerTask = 64;  // manifests one reading task reads in a row
constexpr size_t kLookupsPerTask = 2048;  // blobs one lookup task resolves in a row
constexpr unsigned kLookupThreads = 2;

bool is_sha256_hex(std::string_view s) { return s.size() == 64 && all_lower_hex_digits(s); }

class Checker {
public:
    Checker(const Store& store, const StoreCheckOptions& options, JobContext* job, Partial<StoreCheckReport>& out,
            std::vector<StoredManifest>& manifests)
        : m_store(store), m_options(options), m_job(job), m_report(out.value), m_stopped_by(out.stopped_by), m_manifests(manifests) {}

    // The whole store: blobs/ listed once, the scan and every manifest it found read, and the
    // cache's entries of both blob kinds on blobs/'s device read, each on a thread of its own
    // (what the cache holds is checked against each blob's stamp when looked up).
    void run_store() {
        m_batch_cache_reads = true;
        BlobDirectory blobs;
        StoreScan scan;
        bool read = true;
        const size_t first = m_manifests.size();
        const std::string blobs_path = m_store.path_of("blobs");
        struct stat st {};
        const bool prefetch = m_options.cache && m_options.cache->enabled() && ::stat(blobs_path.c_str(), &st) == 0;
        const CacheKind kinds[] = {CacheKind::blob_digest, CacheKind::blob_header};
        CachedEntries cached[2];
        const uint64_t tasks = prefetch ? 4 : 2;
        parallel_for(tasks, static_cast<unsigned>(tasks), [&](uint64_t task) {
            if (task == 0) {
                scan = m_store.scan(m_job);
                read = read_manifests(scan.manifests);
                if (read) name_blobs(first);
            } else if (task == 1) {
                blobs = open_listed_blob_directory(m_store);
            } else {
                cached[task - 2] = read_cached_entries(*m_options.cache, kinds[task - 2], static_cast<uint64_t>(st.st_dev));
            }
            return true;
        });
        m_report.manifests_complete = scan.complete;
        for (Diagnostic& d : scan.diagnostics) add_store_diagnostic(std::move(d));
        if (prefetch)
            for (size_t k = 0; k < 2; ++k) m_cached[{kinds[k], static_cast<uint64_t>(st.st_dev)}] = std::move(cached[k]);
        check(scan.manifests, first, read, std::move(blobs));
    }

    // blobs/ as the run listed it (empty unless run_store listed it). Lookups are over by then.
    std::vector<BlobFile> take_blob_files() {
        m_blob_directory.listed.clear();
        return std::move(m_blob_directory.files);
    }

    // The manifests `refs` name, their blobs looked up in `blobs`.
    void run(const std::vector<ManifestRef>& refs, BlobDirectory blobs) {
        const size_t first = m_manifests.size();
        const bool read = read_manifests(refs);
        if (read) name_blobs(first);
        check(refs, first, read, std::move(blobs));
    }

private:
    // The manifests of `refs`, read (`read` false when cancelled meanwhile) into m_manifests from
    // `first` on, checked with their blobs looked up in `blobs`.
    void check(const std::vector<ManifestRef>& refs, size_t first, bool read, BlobDirectory blobs) {
        m_report.root = m_store.root();
        m_blob_directory = std::move(blobs);
        if (!read) {
            m_manifests.resize(first);
            stop();
            return;
        }
        m_report.models.reserve(m_report.models.size() + refs.size());
        look_up_blobs();
        m_blobs.reserve(m_lookups.size());
        m_uses.reserve(m_layer_lookup.size());
        for (size_t i = 0; i < refs.size(); ++i) {
            if (stop()) {
                m_manifests.resize(first + i);
                return;
            }
            check_manifest(refs[i], m_manifests[first + i]);
        }
        if (stop()) return;
        if (m_options.verify_digests)
            hash_blobs();
        else if (m_options.cache && m_options.cache->enabled())
            note_cached_digests();
        if (m_options.parse_blobs)
            for (BlobState& b : m_blobs) {
                if (stop()) return;
                parse_blob(b);
            }
        if (stop()) return;
        if (m_options.cache) m_options.cache->flush();
        if (m_options.verify_digests) {
            m_report.digests_verified = true;
            for (ModelCheck& m : m_report.models) m.digests_verified = true;
        }
        for (const BlobState& b : m_blobs)
            for (const BlobUse& u : uses_of(b)) {
                ModelCheck& mc = m_report.models[u.model];
                if (b.digest_unknown) mc.digests_verified = m_report.digests_verified = false;
                mc.unverified += b.header_unknown;
            }
        if (m_options.verify_digests)
            for (ModelCheck& m : m_report.models) m.digests_known = m.digests_verified;
        job_report(m_job, 1.0);
    }

    // A pass without the digest pass but with a cache: which models' blobs all hold, by the
    // sha256 the cache holds for each file as it is now, the content their digests name
    // (ModelCheck::digests_known). Nothing is hashed and nothing reported.
    void note_cached_digests() {
        for (ModelCheck& m : m_report.models) m.digests_known = true;
        for (const BlobState& b : m_blobs) {
            const std::optional<std::string_view> known = cached_hash(b);
            for (const BlobUse& u : uses_of(b))
                if (!known || *known != u.layer->blob->hex) m_report.models[u.model].digests_known = false;
        }
    }

    bool stop() {
        if (m_stopped_by) return true;
        if (!job_cancelled(m_job)) return false;
        m_stopped_by = cancelled_error("check");
        add_store_diagnostic(Diagnostic::from_error(*m_stopped_by, "store"));
        return true;
    }

    void add_store_diagnostic(Diagnostic d) {
        m_report.store_diagnostics.push_back(d);
        m_report.diagnostics.push_back(std::move(d));
    }

    // A finding about `model`; `layer` names the layer it concerns, if any.
    void add(size_t model, Diagnostic d, const ManifestLayer* layer = nullptr) {
        ModelCheck& mc = m_report.models[model];
        (d.severity == Severity::error ? mc.errors : mc.warnings)++;
        if (layer && d.severity == Severity::error) mc.failed_layers.emplace(layer->field, d);
        mc.reasons.push_back(d);
        mc.reason_layers.push_back(layer ? layer->field : std::string());
        m_report.diagnostics.push_back(std::move(d));
    }

    void add_located(size_t model, Severity severity, const Error& e, const std::string& field, const ManifestLayer& layer) {
        add(model, located({severity, "store", e.code, field, e.offset, e.message}, m_report.models[model].manifest_path), &layer);
    }

    // Every manifest read and parsed, on the machine's cores (each task a run of consecutive
    // manifests with its own model folder); appended to m_manifests in the order of `refs`, whose
    // elements never move after (BlobUse points into them). False when cancelled.
    bool read_manifests(const std::vector<ManifestRef>& refs) {
        const size_t first = m_manifests.size();
        m_manifests.resize(first + refs.size());
        const uint64_t tasks = (refs.size() + kManifestsPerTask - 1) / kManifestsPerTask;
        return parallel_for(tasks, 0, [&](uint64_t task) {
            if (job_cancelled(m_job)) return false;
            ManifestFolder folder;
            const size_t end = std::min(refs.size(), static_cast<size_t>((task + 1) * kManifestsPerTask));
            for (size_t i = static_cast<size_t>(task * kManifestsPerTask); i < end; ++i)
                m_manifests[first + i] = read_manifest_in(m_store, folder, refs[i], ManifestDigest::skipped);
            return true;
        });
    }

    void check_manifest(const ManifestRef& ref, const StoredManifest& stored) {
        size_t model = m_report.models.size();
        ModelCheck check;
        check.name = ref.name;
        check.manifest_path = ref.path;
        m_report.models.push_back(std::move(check));
        for (const Diagnostic& d : stored.manifest.diagnostics) add(model, located(d, ref.path));
        if (!stored.found) return;
        const Manifest& m = stored.manifest;
        if (m.has_config) check_layer(model, m.config);
        for (const ManifestLayer& l : m.layers) check_layer(model, l);
    }

    // Whether the check looks the layer's blob up at all.
    static bool resolved(const ManifestLayer& layer) {
        return layer.blob && layer.kind != LayerKind::unknown && layer.kind != LayerKind::embed;
    }

    // The blobs the manifests from m_manifests[first] on name, once per digest and in the
    // digests' order (m_distinct): the listing's names, its index and its stats are in that order
    // too, so the lookups walk them front to back instead of at random. Each layer gets its
    // lookup (m_layer_lookup, in the order check_layer meets the layers). Needs the manifests
    // only: it runs while blobs/ is still being listed.
    void name_blobs(size_t first) {
        struct Named {
            Sha256Bytes key;  // zero when the hex has none (never for a digest the grammar accepted)
            bool keyed;
            uint32_t layer;  // the layer's place in m_layer_lookup
            const BlobDigest* digest;
        };
        std::vector<Named> named;
        size_t layers = 0;
        for (size_t i = first; i < m_manifests.size(); ++i) layers += m_manifests[i].manifest.layers.size() + 1;
        named.reserve(layers);
        const auto name = [&](const ManifestLayer& layer) {
            if (!resolved(layer)) return;
            const std::optional<Sha256Bytes> key = sha256_bytes(layer.blob->hex);
            named.push_back({key.value_or(Sha256Bytes{}), key.has_value(), static_cast<uint32_t>(named.size()), &*layer.blob});
        };
        for (size_t i = first; i < m_manifests.size(); ++i) {
            if (!m_manifests[i].found) continue;
            const Manifest& m = m_manifests[i].manifest;
            if (m.has_config) name(m.config);
            for (const ManifestLayer& l : m.layers) name(l);
        }
        std::sort(named.begin(), named.end(), [](const Named& a, const Named& b) { return a.key < b.key; });
        m_layer_lookup.assign(named.size(), 0);
        m_distinct.clear();
        m_distinct.reserve(named.size());
        for (size_t i = 0; i < named.size(); ++i) {
            const bool same = i > 0 && named[i].keyed && named[i - 1].keyed && named[i].key == named[i - 1].key;
            if (!same) m_distinct.push_back(named[i].digest);
            m_layer_lookup[named[i].layer] = static_cast<uint32_t>(m_distinct.size() - 1);
        }
    }

    // The lookups of m_distinct, on two threads in runs of consecutive digests (each thread still
    // walks the listing front to back; every lookup is independent of the others), then each
    // lookup's file.
    void look_up_blobs() {
        m_lookups.resize(m_distinct.size());
        const uint64_t runs = (m_distinct.size() + kLookupsPerTask - 1) / kLookupsPerTask;
        parallel_for(runs, kLookupThreads, [&](uint64_t run) {
            const size_t end = std::min(m_distinct.size(), static_cast<size_t>((run + 1) * kLookupsPerTask));
            for (size_t i = static_cast<size_t>(run * kLookupsPerTask); i < end; ++i)
                m_lookups[i] = find_blob_in(m_store, m_blob_directory, *m_distinct[i]);
            return true;
        });
        m_next_layer = 0;
        same_files();
    }

    // m_file_of: per lookup, the first lookup that found the same canonical path (two digests may
    // resolve to one file through a symlink; itself for a path seen first, and for a blob not
    // found); open addressing by the path, sized once.
    void same_files() {
        struct PathSlot {
            uint32_t tag = 0;  // the high half of the path's hash
            uint32_t lookup = 0;  // index into m_lookups + 1; 0 for an empty slot
        };
        std::vector<PathSlot> slots(std::bit_ceil(std::max<size_t>(2 * m_lookups.size(), 16)));
        const size_t mask = slots.size() - 1;
        m_file_of.resize(m_lookups.size());
        for (size_t i = 0; i < m_lookups.size(); ++i) {
            m_file_of[i] = static_cast<uint32_t>(i);
            const BlobLookup& lookup = m_lookups[i];
            if (!lookup.found()) continue;
            const size_t hash = BlobPathHash{}(lookup.path);
            const uint32_t tag = static_cast<uint32_t>(hash >> 32);
            for (size_t at = hash & mask;; at = (at + 1) & mask) {
                PathSlot& slot = slots[at];
                if (slot.lookup == 0) {
                    slot = {tag, static_cast<uint32_t>(i + 1)};
                    break;
                }
                if (slot.tag == tag && m_lookups[slot.lookup - 1].path == lookup.path) {
                    m_file_of[i] = slot.lookup - 1;
                    break;
                }
            }
        }
        m_state_of_file.assign(m_lookups.size(), kNoState);
    }

    void check_layer(size_t model, const ManifestLayer& layer) {
        if (!resolved(layer)) return;
        const uint32_t at = m_layer_lookup[m_next_layer++];
        const BlobLookup& lookup = m_lookups[at];
        for (const Error& w : lookup.warnings) add_located(model, Severity::warning, w, layer.field, layer);
        if (!lookup.found()) {
            add_located(model, Severity::error, *lookup.error, layer.field, layer);
            return;
        }
        if (layer.has_size && lookup.size != layer.size)
            add_located(model, Severity::error,
                        {ErrorCode::E_SIZE_MISMATCH, "", layer.size_at,
                         "the layer says " + std::to_string(layer.size) + " bytes; " + lookup.name + " has " + std::to_string(lookup.size)},
                        layer.field + ".size", layer);
        uint32_t& state = m_state_of_file[m_file_of[at]];
        if (state == kNoState) {
            state = static_cast<uint32_t>(m_blobs.size());
            m_blobs.push_back({&lookup, kNoUse, kNoUse, false, false, {}});
        }
        BlobState& b = m_blobs[state];
        const uint32_t use = static_cast<uint32_t>(m_uses.size());
        m_uses.push_back({model, &layer});
        if (b.last_use == kNoUse)
            b.first_use = use;
        else
            m_uses[b.last_use].next = use;
        b.last_use = use;
    }

    UseChain uses_of(const BlobState& b) const { return {m_uses, b.first_use}; }

    // A blob's answer is stored only when the file is still the one that was found: a file
    // changed meanwhile keys nothing.
    void remember(const BlobState& b, CacheKind kind, std::string_view detail, std::string value) {
        if (m_options.cache && file_stamp(b.lookup->path) == b.lookup->stamp())
            m_options.cache->store(kind, b.lookup->stamp(), detail, std::move(value));
    }

    // What the cache holds for the blob: looked up on its own, or, when the whole store is
    // checked, in the entries of its device read at once. The value is valid until the next call.
    std::optional<std::string_view> cached(const BlobState& b, CacheKind kind, std::string_view detail) {
        if (!m_options.cache) return std::nullopt;
        const FileStamp stamp = b.lookup->stamp();
        if (!m_batch_cache_reads) {
            std::optional<std::string> value = m_options.cache->lookup(kind, stamp, detail);
            if (!value) return std::nullopt;
            m_looked_up = std::move(*value);
            return std::string_view(m_looked_up);
        }
        auto [entries, first] = m_cached.try_emplace({kind, stamp.device});
        if (first) entries->second = read_cached_entries(*m_options.cache, kind, stamp.device);
        return entries->second.find(stamp, detail);
    }

    // The blob's sha256 the cache holds (valid until the next lookup in the cache).
    std::optional<std::string_view> cached_hash(const BlobState& b) {
        std::optional<std::string_view> hex = cached(b, CacheKind::blob_digest, "sha256");
        if (!hex || !is_sha256_hex(*hex)) return std::nullopt;
        return hex;
    }

    // The kind a use of a blob is parsed as; nullopt when this check does not parse it.
    std::optional<LayerKind> parsed_kind(const BlobUse& u) const {
        if (!m_options.parse_weight_blobs && (u.layer->kind == LayerKind::model || u.layer->kind == LayerKind::tensor)) return std::nullopt;
        return layer_is_gguf(u.layer->kind) ? LayerKind::model : u.layer->kind;
    }

    void hash_blobs() {
        uint64_t total = 0, done = 0;
        for (const BlobState& b : m_blobs) total += b.lookup->size;
        for (BlobState& b : m_blobs) {
            if (stop()) return;
            Result<FileHash> hash = FileHash{};
            std::optional<std::string_view> known = cached_hash(b);
            if (known) {
                hash->bytes = b.lookup->size;
            } else if (m_options.cached_only) {
                b.digest_unknown = true;
                continue;
            } else {
                hash = sha256_file(b.lookup->path, m_job, [&](uint64_t n) {
                    if (total) job_report(m_job, static_cast<double>(done + n) / static_cast<double>(total));
                });
                if (hash) remember(b, CacheKind::blob_digest, "sha256", hash->hex);
            }
            ++m_report.blobs_checked;
            if (!hash) {
                if (hash.error().code == ErrorCode::E_CANCELLED) {
                    stop();
                    return;
                }
                for (const BlobUse& u : uses_of(b))
                    add_located(u.model, Severity::error,
                                {hash.error().code, "", std::nullopt, b.lookup->name + ": " + hash.error().message}, u.layer->field, *u.layer);
                continue;
            }
            done += hash->bytes;
            m_report.bytes_hashed += hash->bytes;
            const std::string_view actual = known ? *known : std::string_view(hash->hex);
            for (const BlobUse& u : uses_of(b))
                if (actual != u.layer->blob->hex)
                    add_located(u.model, Severity::error,
                                {ErrorCode::E_DIGEST_MISMATCH, "", u.layer->digest_at,
                                 "expected sha256:" + u.layer->blob->hex + " actual sha256:" + std::string(actual) + " (" + b.lookup->name + ")"},
                                u.layer->field + ".digest", *u.layer);
        }
    }

    // Problems inside the blob, reported once per reference, under the blob's path.
    void blob_problem(const BlobState& b, const BlobUse& u, Diagnostic d) {
        d.field = d.field.empty() ? b.lookup->name : b.lookup->name + " " + d.field;
        d.message += " (" + u.layer->field + " of " + m_report.models[u.model].name.display() + ")";
        add(u.model, std::move(d), u.layer);
    }

    void parse_blob(BlobState& b) {
        uint32_t done = 0;  // bit k: the kinds parsed (LayerKind k)
        for (const BlobUse& u : uses_of(b)) {
            std::optional<LayerKind> parsed = parsed_kind(u);
            if (!parsed) continue;
            const LayerKind kind = *parsed;
            const uint32_t bit = uint32_t{1} << static_cast<unsigned>(kind);
            if (done & bit) {
                replay(b, u, kind);
                continue;
            }
            done |= bit;
            std::optional<std::vector<Diagnostic>> findings = findings_for(b, kind);
            if (!findings) {
                b.header_unknown = true;
                continue;
            }
            if (findings->empty()) continue;
            b.findings.emplace_back(kind, std::move(*findings));
            replay(b, u, kind);
        }
    }

    // What parsing `b` as `kind` finds: from the cache, else parsed (and stored), else, with
    // cached_only, unknown. The config is read by every listing anyway, so it is always parsed.
    std::optional<std::vector<Diagnostic>> findings_for(const BlobState& b, LayerKind kind) {
        const std::string detail = header_detail(kind);
        if (std::optional<std::string_view> text = cached(b, CacheKind::blob_header, detail))
            if (std::optional<std::vector<Diagnostic>> known = findings_of(*text)) return known;
        if (m_options.cached_only && kind != LayerKind::config) return std::nullopt;
        bool complete = true;
        std::vector<Diagnostic> findings = parse_as(b, kind, complete);
        if (complete && !job_cancelled(m_job)) remember(b, CacheKind::blob_header, detail, findings_text(findings));
        return findings;
    }

    void replay(const BlobState& b, const BlobUse& u, LayerKind kind) {
        for (const auto& [parsed, findings] : b.findings)
            if (parsed == kind)
                for (const Diagnostic& d : findings) blob_problem(b, u, d);
    }

    // `complete` turns false when the blob could not be read at all (an answer about this
    // moment, not about the file's content, so not one to keep).
    std::vector<Diagnostic> parse_as(const BlobState& b, LayerKind kind, bool& complete) {
        std::vector<Diagnostic> out;
        auto problem = [&](Severity s, ErrorCode code, std::string field, std::optional<uint64_t> offset, std::string message) {
            out.push_back({s, "store", code, std::move(field), offset, std::move(message)});
        };
        if (kind == LayerKind::model || kind == LayerKind::tensor) {
            auto source = m_store.open_blob(*b.lookup);
            if (!source) {
                complete = false;
                problem(Severity::error, source.error().code, "", std::nullopt, source.error().message);
                return out;
            }
            bool safetensors_bytes = kind == LayerKind::model && looks_like_safetensors(**source);
            Model m = kind == LayerKind::model ? read_gguf(*source, {}, m_job) : read_safetensors(*source, {}, m_job);
            for (Diagnostic& d : m.diagnostics) {
                if (safetensors_bytes && d.severity == Severity::error) d.message += "; the blob holds safetensors bytes, not GGUF";
                d.tensor.reset();  // an index into `m`, which ends here (and the cache keeps no index)
                out.push_back(std::move(d));
            }
            return out;
        }
        const uint64_t cap = kind == LayerKind::config ? kMaxConfigBytes : kMaxJsonBlobBytes;
        if (kind != LayerKind::config && kind != LayerKind::params && kind != LayerKind::json && kind != LayerKind::messages) return out;
        if (b.lookup->size > cap) {
            if (kind == LayerKind::json)
                problem(Severity::warning, ErrorCode::W_NOT_CHECKED, "", std::nullopt,
                        "JSON layer of " + std::to_string(b.lookup->size) + " bytes above limit max_json_blob_bytes=" + std::to_string(cap) +
                            " is not parsed");
            else if (kind != LayerKind::messages)
                problem(Severity::error, kind == LayerKind::config ? ErrorCode::E_CONFIG_TOO_LARGE : ErrorCode::E_PARAMS_JSON, "",
                        std::nullopt,
                        std::to_string(b.lookup->size) + " bytes exceeds limit " +
                            (kind == LayerKind::config ? "max_config_bytes=" : "max_json_blob_bytes=") + std::to_string(cap));
            return out;
        }
        auto text = read_text_blob(m_store, *b.lookup, cap);
        if (!text) {
            complete = false;
            problem(Severity::error, text.error().code, "", std::nullopt, text.error().message);
            return out;
        }
        if (kind == LayerKind::messages) {
            if (!utf8_valid(text->text))
                problem(Severity::warning, ErrorCode::W_TEXT_NOT_UTF8, "", std::nullopt, "the messages blob is not valid UTF-8");
            return out;
        }
        Status st = kind == LayerKind::config
            ? config_status(text->text)
            : check_json_text(text->text, kind == LayerKind::params ? ErrorCode::E_PARAMS_JSON : ErrorCode::E_JSON_LAYER,
                              kind == LayerKind::params ? "params" : "json");
        if (!st) problem(Severity::error, st.error().code, st.error().field, st.error().offset, st.error().message);
        return out;
    }

    static Status config_status(const std::string& text) {
        auto config = parse_model_config(text);
        if (!config) return config.error();
        return ok_status();
    }

    const Store& m_store;
    const StoreCheckOptions& m_options;
    JobContext* m_job;
    StoreCheckReport& m_report;
    std::optional<Error>& m_stopped_by;  // set once the check is cancelled
    std::vector<StoredManifest>& m_manifests;  // per model of the report, the manifest read
    BlobDirectory m_blob_directory;  // blobs/, opened (for the whole store: and listed) once per run
    std::vector<BlobLookup> m_lookups;  // every blob resolved in the run, once per digest, in the digests' order
    std::vector<const BlobDigest*> m_distinct;  // per lookup, its digest (in m_manifests)
    std::vector<uint32_t> m_layer_lookup;  // per layer check_layer meets, its lookup
    size_t m_next_layer = 0;  // the next layer check_layer meets
    std::vector<uint32_t> m_file_of;  // per lookup, the first lookup of the same file (same_files)
    std::vector<uint32_t> m_state_of_file;  // per such first lookup, its blob in m_blobs (or kNoState)
    std::vector<BlobState> m_blobs;  // per file, in the order the layers first name it
    std::vector<BlobUse> m_uses;  // every use of every blob, chained per blob
    std::string m_looked_up;  // the last value looked up in the cache on its own
    bool m_batch_cache_reads = false;  // the whole store: the cache read by device (m_cached), not per blob
    std::map<std::pair<CacheKind, uint64_t>, CachedEntries> m_cached;  // (kind, device) -> its entries, read once per run
};

}  // namespace

Verdict ModelCheck::verdict() const {
    if (errors) return Verdict::errors;
    if (unverified) return Verdict::unverified;
    return warnings ? Verdict::warnings : Verdict::ok;
}

StoreCheckOptions cached_check(CacheDatabase& cache) { return {true, true, true, &cache, true}; }

StoreCheckOptions full_check(CacheDatabase* cache) { return {true, true, true, cache, false}; }

const Diagnostic* ModelCheck::first_error() const {
    for (const Diagnostic& d : reasons)
        if (d.severity == Severity::error) return &d;
    return nullptr;
}

namespace {

// "CODE field", the manifest path left out of the field: the model is named already.
std::string place_of(const Diagnostic& d, const std::string& manifest_path) {
    std::string field = d.field;
    if (!manifest_path.empty() && field.starts_with(manifest_path)) field = field.substr(std::min(field.size(), manifest_path.size() + 1));
    return std::string(code_name(d.code)) + (field.empty() ? "" : " " + field);
}

// "blobs/sha256-<64 hex>" shortened to its first 12 digits, for a table cell.
std::string shorten_blob_names(std::string text) {
    const std::string prefix = "blobs/sha256-";
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
        const size_t digits = at + prefix.size();
        if (text.size() - digits >= 64) text.replace(digits + 12, 52, "\xE2\x80\xA6");
    }
    return text;
}

}  // namespace

std::string ModelCheck::place_text(const Diagnostic& d) const {
    return shorten_blob_names(escape_for_display(place_of(d, manifest_path), 200));
}

std::string ModelCheck::short_reason() const {
    const Diagnostic* d = first_error();
    return d ? place_text(*d) : std::string();
}

std::string ModelCheck::reason_text() const {
    if (const Diagnostic* d = first_error()) {
        std::string text = escape_for_display(place_of(*d, manifest_path), 200) + ": " + escape_for_display(d->message, 240);
        if (errors > 1) text += " (+" + std::to_string(errors - 1) + " more)";
        return text;
    }
    if (unverified) return "not yet verified";
    if (warnings) return std::to_string(warnings) + (warnings == 1 ? " warning" : " warnings");
    return "ok";
}

std::vector<FailedTensorLayer> failed_tensor_layers(const Manifest& manifest, const ModelCheck& check) {
    std::vector<FailedTensorLayer> out;
    for (const ManifestLayer& l : manifest.layers) {
        if (l.kind != LayerKind::tensor && l.kind != LayerKind::model) continue;
        auto it = check.failed_layers.find(l.field);
        if (it == check.failed_layers.end()) continue;
        out.push_back({l.name.value_or(l.field), l.field, l.blob ? l.blob->hex : std::string(), it->second});
    }
    return out;
}

const FailedTensorLayer* failed_layer_of(const std::vector<FailedTensorLayer>& failed, const std::string& blob_path) {
    for (const FailedTensorLayer& f : failed)
        if (!f.blob_hex.empty() && blob_path.ends_with(f.blob_hex)) return &f;
    return nullptr;
}

const char* verdict_name(Verdict v) {
    static constexpr NameRow<Verdict> kNames[] = {{Verdict::ok, "ok"}, {Verdict::warnings, "warnings"}, {Verdict::errors, "rejected"}, {Verdict::unverified, "unverified"}};
    return name_of(kNames, v, "rejected");
}

size_t StoreCheckReport::error_count() const {
    return static_cast<size_t>(
        std::count_if(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::error; }));
}

Partial<StoreCheckReport> check_store(const Store& store, const StoreCheckOptions& options, JobContext* job) {
    std::vector<StoredManifest> manifests;
    return check_store_keeping_manifests(store, options, job, manifests);
}

Partial<StoreCheckReport> check_store_keeping_manifests(const Store& store, const StoreCheckOptions& options, JobContext* job,
                                                        std::vector<StoredManifest>& manifests, std::vector<BlobFile>* blob_files) {
    Partial<StoreCheckReport> out;
    Checker checker(store, options, job, out, manifests);
    checker.run_store();
    if (blob_files) *blob_files = checker.take_blob_files();
    return out;
}

ModelCheck check_store_model(const Store& store, const ModelName& name, const StoreCheckOptions& options, JobContext* job) {
    Partial<StoreCheckReport> out;
    StoreCheckReport& report = out.value;
    ManifestRef ref{name, name.manifest_path(), 0, 0};
    std::vector<StoredManifest> manifests;
    Checker(store, options, job, out, manifests).run({ref}, open_blob_directory(store));
    if (report.models.empty()) {  // cancelled before the manifest was read
        ModelCheck check;
        check.name = name;
        check.manifest_path = ref.path;
        for (Diagnostic& d : report.store_diagnostics) {
            check.reasons.push_back(std::move(d));
            check.reason_layers.emplace_back();
        }
        check.errors = check.reasons.size();
        return check;
    }
    ModelCheck check = std::move(report.models.front());
    // A cancellation leaves the verdict unfinished: it says so among its reasons.
    for (Diagnostic& d : report.store_diagnostics) {
        ++check.errors;
        check.reasons.push_back(std::move(d));
        check.reason_layers.emplace_back();
    }
    return check;
}

}  // namespace mlens
