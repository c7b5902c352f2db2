// A store model's loadability verdict kept in the cache database (core/src/ollama/
// store_loadability.h): the cached verdict is the fresh one, a cache-only listing shows it, so
// does a structure listing of blobs whose sha256 the cache knows, a touched manifest or blob is a
// miss, and a verdict read while a blob changed is never stored.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>

#include "../../core/src/ollama/store_loadability.h"
#include "broken_store.h"
#include "build_paths.h"
#include "mlens/io/cache_database.h"
#include "mlens/ollama/store_listing.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace fs = std::filesystem;

namespace {

// A copy of the demo store (GGUF and tensor-blob models) plus the damaged models of
// broken_store.h, and a cache folder.
struct CachedStore {
    TempDir dir, outside, cache_dir;
    std::string root = dir.file("store");
    std::shared_ptr<CacheDatabase> cache;
    CachedStore() {
        fs::copy(std::string(MLENS_DEMO_DIR) + "/ollama-store", root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        OllamaStoreBuilder b(root);
        write_broken_store(b, outside.path());
        cache = CacheDatabase::open(cache_dir.path());
    }
    Store store() const {
        auto s = Store::open(root);
        REQUIRE(s);
        return *s;
    }
    uint64_t cached_verdicts() {
        for (const CacheKindCount& c : cache->entry_counts())
            if (c.kind == CacheKind::model_loadability) return c.entries;
        return 0;
    }
};

// Each model's loadability as JSON text ("-" when the listing has none).
std::map<std::string, std::string> loads_of(const StoreListing& l) {
    std::map<std::string, std::string> out;
    for (const ModelListing& m : l.models) out[m.ref.name.display()] = m.loads ? loadability_json(*m.loads).dump() : "-";
    return out;
}

// Each model's parameter count (0 when the listing has none).
std::map<std::string, uint64_t> parameters_of(const StoreListing& l) {
    std::map<std::string, uint64_t> out;
    for (const ModelListing& m : l.models) out[m.ref.name.display()] = m.parameters.value_or(0);
    return out;
}

const ModelListing& row_of(const StoreListing& l, const std::string& name) {
    for (const ModelListing& m : l.models)
        if (m.ref.name.display() == name) return m;
    FAIL("no model " << name);
    return l.models.front();
}

void touch(const std::string& path) {
    struct timespec times[2] = {{0, UTIME_NOW}, {1'600'000'000, 123}};
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

// The blob file of the GGUF model layer of `name`'s manifest.
std::string model_blob(const Store& store, const std::string& name) {
    auto parsed = parse_model_reference(name);
    REQUIRE(parsed);
    const StoredManifest m = store.read_manifest(*parsed);
    for (const ManifestLayer& l : m.manifest.layers)
        if (l.kind == LayerKind::model && l.blob) return store.root() + "/blobs/" + blob_file_name(*l.blob);
    FAIL("no model layer in " << name);
    return {};
}

}  // namespace

TEST_CASE("a cached loadability verdict and parameter count are the fresh ones and a cache-only listing shows them", "[cache][ollama]") {
    CachedStore s;
    const Store store = s.store();
    const StoreListing fresh = list_store(store, full_check(nullptr)).value;
    const auto fresh_loads = loads_of(fresh);
    CHECK(fresh_loads.at("tiny-llama:q4_0").find("\"verdict\":\"loads\"") != std::string::npos);
    CHECK(fresh_loads.at("tiny-mlx:mixed").find("\"problem\":\"not_gguf\"") != std::string::npos);
    CHECK(fresh_loads.at("truncated:latest") == "-");  // rejected by the check: never opened

    // Before any full pass a cache-only listing has no verdict; the pass stores one per model
    // it opened, and a cache-only listing then shows each, equal to the fresh one.
    for (const auto& [name, loads] : loads_of(list_store(store, cached_check(*s.cache)).value)) CHECK(loads == "-");
    CHECK(loads_of(list_store(store, full_check(s.cache.get())).value) == fresh_loads);
    size_t opened = 0;
    for (const auto& [name, loads] : fresh_loads) opened += loads != "-";
    CHECK(s.cached_verdicts() == opened);
    CHECK(loads_of(list_store(store, cached_check(*s.cache)).value) == fresh_loads);
    CHECK(loads_of(list_store(store, full_check(s.cache.get())).value) == fresh_loads);
    // The parameter counts come with the verdicts: the ones `mlens show` counts.
    const auto fresh_parameters = parameters_of(fresh);
    CHECK(fresh_parameters.at("tiny-llama:q4_0") == 4194624);
    CHECK(fresh_parameters.at("truncated:latest") == 0);
    CHECK(parameters_of(list_store(store, cached_check(*s.cache)).value) == fresh_parameters);

    SECTION("a touched manifest is a miss until a full pass judges it again") {
        touch(store.root() + "/" + parse_model_reference("tiny-llama:q4_0")->manifest_path());
        const StoreListing after = list_store(store, cached_check(*s.cache)).value;
        CHECK(!row_of(after, "tiny-llama:q4_0").loads);
        CHECK(row_of(after, "tiny-mlx:mixed").loads);
        CHECK(loads_of(list_store(store, full_check(s.cache.get())).value) == fresh_loads);
        CHECK(loads_of(list_store(store, cached_check(*s.cache)).value) == fresh_loads);
    }
    SECTION("a touched blob leaves its digest unverified, and so the verdict unknown") {
        touch(model_blob(store, "tiny-llama:q4_0"));
        const StoreListing after = list_store(store, cached_check(*s.cache)).value;
        CHECK(!row_of(after, "tiny-llama:q4_0").check.digests_verified);
        CHECK(!row_of(after, "tiny-llama:q4_0").loads);
        CHECK(loads_of(list_store(store, full_check(s.cache.get())).value) == fresh_loads);
    }
    SECTION("a model blob replaced by another model's: the check rejects it, no verdict is shown") {
        const std::string blob = model_blob(store, "tiny-llama:q4_0");
        fs::remove(blob);
        fs::copy_file(model_blob(store, "tiny:latest"), blob);
        const StoreListing after = list_store(store, cached_check(*s.cache)).value;
        CHECK(!row_of(after, "tiny-llama:q4_0").loads);
        const StoreListing verified = list_store(store, full_check(s.cache.get())).value;
        CHECK(row_of(verified, "tiny-llama:q4_0").check.verdict() == Verdict::errors);
        CHECK(!row_of(verified, "tiny-llama:q4_0").loads);
    }
}

TEST_CASE("a structure listing with a cache takes the cached verdict of a model whose blobs the cache knows", "[cache][ollama]") {
    CachedStore s;
    const Store store = s.store();
    // Fresh: the structure pass without a cache (which, hashing nothing, also opens the models
    // whose blobs do not match their digests).
    const auto fresh_loads = loads_of(list_store(store, kStructureCheck).value);
    StoreCheckOptions structure = kStructureCheck;
    structure.cache = s.cache.get();

    // Before any digest is cached nothing is known, so every verdict is judged afresh.
    const StoreListing before = list_store(store, structure).value;
    CHECK(loads_of(before) == fresh_loads);
    CHECK(!row_of(before, "tiny-llama:q4_0").check.digests_known);
    (void)list_store(store, full_check(s.cache.get()));
    s.cache->flush();

    // A verdict stored by hand under the manifest's stamp shows that the listing reads it rather
    // than opening the model; the structure pass's own report stays the one without a cache.
    auto name = parse_model_reference("tiny-llama:q4_0");
    REQUIRE(name);
    const StoredManifest manifest = store.read_manifest(*name);
    Loadability marked;
    marked.verdict = LoadVerdict::loads_after_compat;
    s.cache->store(CacheKind::model_loadability, manifest.stamp, "loads", loadability_json(marked).dump());
    s.cache->flush();
    const StoreListing after = list_store(store, structure).value;
    const ModelListing& row = row_of(after, "tiny-llama:q4_0");
    CHECK(row.check.digests_known);
    CHECK(!row.check.digests_verified);
    CHECK(!after.digests_verified);
    REQUIRE(row.loads);
    CHECK(row.loads->verdict == LoadVerdict::loads_after_compat);
    CHECK(loads_of(list_store(store, kStructureCheck).value) == fresh_loads);

    SECTION("a blob touched since its digest was cached: not known, the verdict is judged again") {
        touch(model_blob(store, "tiny-llama:q4_0"));
        const StoreListing touched = list_store(store, structure).value;
        CHECK(!row_of(touched, "tiny-llama:q4_0").check.digests_known);
        CHECK(row_of(touched, "tiny-mlx:mixed").check.digests_known);
        CHECK(loads_of(touched) == fresh_loads);
    }
    SECTION("a model blob replaced by another model's: its cached sha256 is not the digest") {
        const std::string blob = model_blob(store, "tiny-llama:q4_0");
        fs::remove(blob);
        fs::copy_file(model_blob(store, "tiny:latest"), blob);
        (void)list_store(store, full_check(s.cache.get()));
        s.cache->flush();
        const StoreListing replaced = list_store(store, structure).value;
        CHECK(!row_of(replaced, "tiny-llama:q4_0").check.digests_known);
        CHECK(loads_of(replaced).at("tiny-llama:q4_0") == loads_of(list_store(store, kStructureCheck).value).at("tiny-llama:q4_0"));
    }
}

TEST_CASE("a loadability verdict is stored only when every blob was verified and unchanged through the open", "[cache][ollama]") {
    CachedStore s;
    const Store store = s.store();
    auto name = parse_model_reference("tiny-llama:q4_0");
    REQUIRE(name);
    const StoredManifest manifest = store.read_manifest(*name);
    REQUIRE(manifest.found);
    CHECK(manifest.stamp == file_stamp(store.root() + "/" + name->manifest_path()));
    const ModelCheck verified = check_store_model(store, *name, full_check(nullptr));
    REQUIRE(verified.digests_verified);
    REQUIRE(verified.digests_known);

    SECTION("the cache has no digest of the blobs: the verdict is given, not stored") {
        StoreLoadability loads(store, s.cache.get());
        const auto verdict = loads.assess(manifest, verified);
        REQUIRE(verdict);
        CHECK(verdict->loads.verdict == LoadVerdict::loads);
        CHECK(verdict->parameters == std::optional<uint64_t>(4194624));
        loads.finish();
        s.cache->flush();
        CHECK(s.cached_verdicts() == 0);
        CHECK(!StoreLoadability(store, s.cache.get()).known(manifest, verified));
    }
    // A blob changed after its digest was cached (a check that raced a writer) or a manifest
    // changed after it was read, before the open or between the open and finish().
    SECTION("a blob or the manifest changed after it was verified or read: not stored") {
        (void)check_store_model(store, *name, full_check(s.cache.get()));
        s.cache->flush();
        const bool blob = GENERATE(true, false);
        const bool before_open = GENERATE(true, false);
        const std::string changed = blob ? model_blob(store, "tiny-llama:q4_0") : store.root() + "/" + name->manifest_path();
        if (before_open) touch(changed);
        StoreLoadability loads(store, s.cache.get());
        CHECK(loads.assess(manifest, verified));
        if (!before_open) touch(changed);
        loads.finish();
        s.cache->flush();
        CHECK(s.cached_verdicts() == 0);
    }
    SECTION("every blob verified and unchanged: stored by finish(), and known by the manifest's stamp") {
        (void)check_store_model(store, *name, full_check(s.cache.get()));
        StoreLoadability loads(store, s.cache.get());
        const auto verdict = loads.assess(manifest, verified);
        REQUIRE(verdict);
        s.cache->flush();
        CHECK(s.cached_verdicts() == 0);
        // A second model naming the same blobs takes their stamps from the first open.
        CHECK(loads.assess(manifest, verified));
        loads.finish();
        s.cache->flush();
        CHECK(s.cached_verdicts() == 1);
        const auto known = StoreLoadability(store, s.cache.get()).known(manifest, verified);
        REQUIRE(known);
        CHECK(loadability_json(known->loads) == loadability_json(verdict->loads));
        CHECK(known->parameters == verdict->parameters);
        ModelCheck unverified = verified;
        unverified.digests_verified = unverified.digests_known = false;
        CHECK(!StoreLoadability(store, s.cache.get()).known(manifest, unverified));
        // A structure pass over blobs the cache knows: the digests are known, not verified.
        ModelCheck known_by_cache = unverified;
        known_by_cache.digests_known = true;
        CHECK(StoreLoadability(store, s.cache.get()).known(manifest, known_by_cache));
        CHECK(!StoreLoadability(store, nullptr).known(manifest, verified));
    }
}

TEST_CASE("loadability_from_json reads what loadability_json wrote and nothing else", "[loads]") {
    Loadability l;
    l.verdict = LoadVerdict::does_not_load;
    l.reasons.push_back({LoadProblem::missing_key, LoadSubject::key, "llama.context_length", 1234, "key not found", "set it"});
    l.reasons.push_back({LoadProblem::not_gguf, LoadSubject::file, "", std::nullopt, "not a GGUF", ""});
    l.warnings.push_back({LoadProblem::uneven_tensor, LoadSubject::tensor, "blk.3.ffn_gate.weight", 99, "uneven", ""});
    const nlohmann::json j = loadability_json(l);
    const auto back = loadability_from_json(j);
    REQUIRE(back);
    CHECK(loadability_json(*back) == j);
    CHECK(back->reasons[0].offset == std::optional<uint64_t>(1234));
    CHECK(!back->reasons[1].offset);
    CHECK(back->reasons[1].name.empty());

    CHECK(!loadability_from_json(nlohmann::json::parse("null")));
    CHECK(!loadability_from_json(nlohmann::json::parse(R"({"verdict":"maybe","reasons":[],"warnings":[]})")));
    CHECK(!loadability_from_json(nlohmann::json::parse(R"({"verdict":"loads","reasons":[]})")));
    nlohmann::json bad = j;
    bad["reasons"][0]["problem"] = "no_such_problem";
    CHECK(!loadability_from_json(bad));
    bad = j;
    bad["reasons"][0]["offset"] = -1;
    CHECK(!loadability_from_json(bad));
    bad = j;
    bad["warnings"][0].erase("text");
    CHECK(!loadability_from_json(bad));
}
