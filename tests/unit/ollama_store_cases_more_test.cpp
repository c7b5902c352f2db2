// Store cases O12–O22 (malformed-inputs.md B3): manifest JSON and schema inside a store, blob
// contents that are not what the layer says, other blobs, config blobs, leftovers, root variants,
// a store changing under the check, huge sizes, and blob permissions.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "gguf_builder.h"
#include "mlens/ollama/store_listing.h"
#include "ollama_store_builder.h"
#include "ollama_store_checks.h"
#include "safetensors_builder.h"
#include "test_paths.h"
#include "time_limit.h"

using namespace mlens;
using namespace mlens::test;

namespace {

uint64_t at(const std::string& text, const std::string& needle) {
    size_t p = text.find(needle);
    REQUIRE(p != std::string::npos);
    return p;
}

std::string field(const std::string& f) { return std::string(kEvilManifest) + " " + f; }
std::string blob_field(const LayerSpec& l, const std::string& f) {
    return "blobs/sha256-" + l.digest.substr(7) + (f.empty() ? "" : " " + f);
}

std::vector<uint8_t> other_gguf() {
    return t1_plus_kvs(1, [](GgufBuilder& g) { g.kv_u8("test.variant", 1); });
}

}  // namespace

TEST_CASE("O12 broken manifest JSON in a store is E_MANIFEST_JSON with the offset", "[ollama]") {
    StoreCase c;
    std::string good = manifest_json(c.b.tiny_config_layer(), {c.b.blob(kModelMediaType, other_gguf())});
    SECTION("missing colon") {
        std::string text = good;
        size_t p = at(text, ":2");
        text.erase(p, 1);
        c.b.write_manifest(kEvilRel, text);
        require_evil_rejected(check_root(c.root()), "E_MANIFEST_JSON", field("schemaVersion"), p);
    }
    SECTION("truncated") {
        std::string text = good.substr(0, 100);
        c.b.write_manifest(kEvilRel, text);
        StoreCheckReport r = check_root(c.root());
        const Diagnostic* d = nullptr;
        for (const Diagnostic& x : r.diagnostics)
            if (x.code == ErrorCode::E_MANIFEST_JSON) d = &x;
        REQUIRE(d);
        CHECK(d->offset == 100u);
        CHECK(d->field.starts_with(kEvilManifest));
    }
    SECTION("invalid UTF-8 inside a string") {
        std::string text = good;
        size_t p = at(text, "vnd.ollama.image.model");
        text[p] = '\xFF';
        c.b.write_manifest(kEvilRel, text);
        require_evil_rejected(check_root(c.root()), "E_MANIFEST_JSON", kEvilManifest, p);
    }
    SECTION("a UTF-8 BOM") {
        c.b.write_manifest(kEvilRel, "\xEF\xBB\xBF" + good);
        require_evil_rejected(check_root(c.root()), "E_MANIFEST_JSON", kEvilManifest, 0);
    }
}

TEST_CASE("O13 a million layers: E_TOO_MANY_LAYERS, or too large to read", "[ollama]") {
    StoreCase c;
    SECTION("as {} entries, 3 MB") {
        std::string text = "{\"schemaVersion\":2,\"config\":" + c.b.tiny_config_layer().json() + ",\"layers\":[";
        const uint64_t first = text.size();
        for (int i = 0; i < 1000000; ++i) text += i ? ",{}" : "{}";
        c.b.write_manifest(kEvilRel, text + "]}");
        require_evil_rejected(check_root(c.root(), 20.0), "E_TOO_MANY_LAYERS", field("layers"), first + 3 * kMaxLayers);
    }
    SECTION("as full layer objects, about 147 MB") {
        // Only the size decides, so the file is real layers followed by a sparse extension.
        std::string layer = c.b.tiny_model_layer().json();
        std::string text = "{\"schemaVersion\":2,\"config\":" + c.b.tiny_config_layer().json() + ",\"layers\":[" + layer;
        for (int i = 0; i < 1000; ++i) text += "," + layer;
        std::string path = c.b.write_manifest(kEvilRel, text);
        std::filesystem::resize_file(path, 147'000'000);
        require_evil_rejected(check_root(c.root()), "E_MANIFEST_TOO_LARGE", kEvilManifest);
    }
}

TEST_CASE("O14 wrong JSON types in a store manifest are E_MANIFEST_SCHEMA", "[ollama]") {
    StoreCase c;
    LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
    std::string good = manifest_json(c.b.tiny_config_layer(), {model});
    auto with = [&](const std::string& from, const std::string& to) {
        std::string text = good;
        text.replace(at(text, from), from.size(), to);
        c.b.write_manifest(kEvilRel, text);
        return text;
    };
    SECTION("size a string") {
        std::string text = with("\"size\":" + std::to_string(model.size), "\"size\":\"" + std::to_string(model.size) + "\"");
        require_evil_rejected(check_root(c.root()), "E_MANIFEST_SCHEMA", field("layers[0].size"),
                              at(text, "\"" + std::to_string(model.size) + "\""));
    }
    SECTION("digest a number") {
        std::string text = with("\"" + model.digest + "\"", "123456789");
        require_evil_rejected(check_root(c.root()), "E_MANIFEST_SCHEMA", field("layers[0].digest"), at(text, "123456789"));
    }
    SECTION("schemaVersion 99") {
        std::string text = with("\"schemaVersion\":2", "\"schemaVersion\":99");
        require_evil_rejected(check_root(c.root()), "E_MANIFEST_SCHEMA", field("schemaVersion"), at(text, "99"));
    }
    SECTION("layers an object") {
        std::string text = with("\"layers\":[", "\"layers\":{\"x\":[");
        text.replace(text.size() - 2, 1, "]}");
        c.b.write_manifest(kEvilRel, text);
        require_evil_rejected(check_root(c.root()), "E_MANIFEST_SCHEMA", field("layers"), at(text, "{\"x\""));
    }
    SECTION("an extra layer of an unknown media type is skipped with a warning") {
        LayerSpec odd{"application/vnd.example.unknown", "sha256:" + std::string(64, 'e'), 5};
        c.evil({model, odd});
        StoreCheckReport r = check_root(c.root());
        require_store_accepted(r, {"W_UNKNOWN_MEDIA_TYPE"});
    }
}

TEST_CASE("O15 a model layer whose blob is not GGUF is rejected by the GGUF parser", "[ollama]") {
    std::mt19937 rng(15);
    std::vector<uint8_t> random(4096);
    for (auto& b : random) b = static_cast<uint8_t>(rng());
    random[0] = 'X';
    const std::string zip("PK\x03\x04\x14\x00\x00\x00\x08\x00", 10);
    struct Variant {
        const char* name;
        std::vector<uint8_t> bytes;
        const char* code;
        const char* field;
        uint64_t offset;
    };
    const std::vector<Variant> variants = {
        {"safetensors S1", s1_bytes(), "E_BAD_MAGIC", "magic", 0},
        {"zip", std::vector<uint8_t>(zip.begin(), zip.end()), "E_BAD_MAGIC", "magic", 0},
        {"random", random, "E_BAD_MAGIC", "magic", 0},
        {"GGUF alone", {'G', 'G', 'U', 'F'}, "E_TRUNCATED", "version", 4},
    };
    for (const Variant& v : variants) {
        INFO(v.name);
        StoreCase c;
        LayerSpec model = c.b.blob(kModelMediaType, v.bytes);
        c.evil({model});
        StoreCheckReport r = check_root(c.root());
        const Diagnostic& d = require_evil_rejected(r, v.code, blob_field(model, v.field), v.offset);
        CHECK(d.format == "GGUF");
        CHECK(d.message.find("layers[0] of evil:latest") != std::string::npos);
        if (std::string(v.name) == "safetensors S1") CHECK(d.message.find("safetensors") != std::string::npos);
    }
}

TEST_CASE("O16 other blobs: huge, hostile text, deep JSON - never interpreted", "[ollama]") {
    StoreCase c;
    LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
    SECTION("a 1 GiB sparse template blob") {
        LayerSpec tmpl = c.b.sparse_zero_blob(kTemplateMediaType, 1ull << 30);
        c.evil({model, tmpl});
        require_store_accepted(check_root(c.root(), 30.0));
    }
    SECTION("hostile system prompt, large license, a Go template payload: accepted") {
        const char hostile[] = "a\0b\xC3\x28\x1B[2J\x1B]0;pwned\x07\xE2\x80\xAE";
        LayerSpec system = c.b.blob(kSystemMediaType, std::string(hostile, sizeof hostile - 1));
        LayerSpec license = c.b.blob(kLicenseMediaType, std::string(10u << 20, 'L'));
        LayerSpec tmpl = c.b.blob(kTemplateMediaType, "{{ call .Exec \"touch /tmp/pwned\" }}{{ template \"x\" }}");
        c.evil({model, system, license, tmpl});
        require_store_accepted(check_root(c.root()));
    }
    SECTION("params nested 100,000 deep: rejected, bounded") {
        LayerSpec params = c.b.blob(kParamsMediaType, "{\"stop\":" + std::string(100000, '[') + std::string(100000, ']') + "}");
        c.evil({model, params});
        const Diagnostic& d = require_evil_rejected(check_root(c.root()), "E_PARAMS_JSON", blob_field(params, "params"));
        CHECK(d.message.find("max_json_depth") != std::string::npos);
    }
    SECTION("params that are valid JSON: accepted") {
        LayerSpec params = c.b.blob(kParamsMediaType, "{\"stop\":[\"<end_of_turn>\"],\"temperature\":0.7}");
        c.evil({model, params});
        require_store_accepted(check_root(c.root()));
    }
    SECTION("messages with invalid UTF-8: a warning") {
        LayerSpec messages = c.b.blob(kMessagesMediaType, "[{\"role\":\"user\",\"content\":\"\xFF\"}]");
        c.evil({model, messages});
        require_store_accepted(check_root(c.root()), {"W_TEXT_NOT_UTF8"});
    }
}

TEST_CASE("O17 config blobs: broken JSON and wrong types are E_CONFIG_JSON", "[ollama]") {
    StoreCase c;
    LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
    SECTION("truncated") {
        std::string text = config_json("gguf", "llama", "Q4_0").substr(0, 30);
        LayerSpec cfg = c.b.blob(kImageConfigMediaType, text);
        c.evil({model}, cfg);
        require_evil_rejected(check_root(c.root()), "E_CONFIG_JSON", blob_field(cfg, "config"), text.size());
    }
    SECTION("file_type an object") {
        std::string text = "{\"model_format\":\"gguf\",\"file_type\":{\"x\":1}}";
        LayerSpec cfg = c.b.blob(kImageConfigMediaType, text);
        c.evil({model}, cfg);
        require_evil_rejected(check_root(c.root()), "E_CONFIG_JSON", blob_field(cfg, "config.file_type"), at(text, "{\"x\""));
    }
    SECTION("model_families with 1,000,000 entries: bounded") {
        std::string text = "{\"model_families\":[";
        for (int i = 0; i < 1000000; ++i) text += i ? ",\"f\"" : "\"f\"";
        LayerSpec cfg = c.b.blob(kImageConfigMediaType, text + "]}");
        c.evil({model}, cfg);
        StoreCheckReport r = check_root(c.root());
        CHECK(find_model(r, "tiny:latest")->errors == 0);
    }
    SECTION("a 10 MB config: refused by its size") {
        LayerSpec cfg = c.b.blob(kImageConfigMediaType, "{\"x\":\"" + std::string(10'000'000, 'x') + "\"}");
        c.evil({model}, cfg);
        const Diagnostic& d = require_evil_rejected(check_root(c.root()), "E_CONFIG_TOO_LARGE", blob_field(cfg, ""));
        CHECK(d.message.find("max_config_bytes") != std::string::npos);
    }
}

TEST_CASE("O18 leftovers in blobs/ are labelled and left alone", "[ollama]") {
    StoreCase c;
    const std::string hex(64, 'a');
    const std::string blobs = c.root() + "/blobs/";
    write_file(blobs + "sha256-" + hex + "-partial", "part");
    write_file(blobs + "sha256-" + hex + "-partial-0", "{\"N\":0}");
    write_file(blobs + "sha256-" + hex + ".tmp", "tmp");
    write_file(blobs + "sha256-4242424242", "temp");
    write_file(blobs + "random-file", "r");
    write_file(blobs + "sub/sha256-" + std::string(64, 'b'), "nested");
    auto before = tree_snapshot(c.root());
    require_store_accepted(check_root(c.root()));
    CHECK(tree_snapshot(c.root()) == before);

    auto store = Store::open(c.root());
    REQUIRE(store);
    StoreListing l = list_store(*store).value;
    CHECK(tree_snapshot(c.root()) == before);
    std::map<std::string, std::pair<BlobFileKind, bool>> kinds;
    for (const ListedBlobFile& f : l.blob_files) kinds[f.file.name] = {f.file.kind.kind, f.referenced};
    CHECK(kinds["sha256-" + hex + "-partial"].first == BlobFileKind::partial);
    CHECK(kinds["sha256-" + hex + "-partial-0"].first == BlobFileKind::partial_part);
    CHECK(kinds["sha256-" + hex + ".tmp"].first == BlobFileKind::other);
    CHECK(kinds["sha256-4242424242"].first == BlobFileKind::temporary);
    CHECK(kinds["random-file"].first == BlobFileKind::other);
    CHECK(kinds["sub"].first == BlobFileKind::other);
    const std::string tiny_model = "sha256-" + c.b.tiny_model_layer().digest.substr(7);
    CHECK(kinds[tiny_model] == std::make_pair(BlobFileKind::blob, true));
    CHECK(kinds.size() == 8);
    REQUIRE(l.references_known);
    const BlobFilesSummary summary = l.blob_summary();
    CHECK(summary.unreferenced == 0u);
    CHECK(summary.partial == 2);
    CHECK(summary.temporary == 1);
    CHECK(summary.legacy == 0);
    CHECK(summary.other == 3);
    CHECK(summary.blobs == 2);
}

TEST_CASE("O19 store root variants", "[ollama]") {
    SECTION("/ opens without walking the file system") {
        auto store = Store::open("/");
        REQUIRE(store);
        test::CpuStopwatch watch;
        StoreScan scan = store->scan();
        CHECK(watch.seconds() < 2.0 * kSlowdown);
        CHECK(scan.manifests.empty());
    }
    SECTION("a symlink to a valid store") {
        StoreCase c;
        TempDir other;
        std::string link = other.file("store-link");
        REQUIRE(::symlink(c.root().c_str(), link.c_str()) == 0);
        auto store = Store::open(link);
        REQUIRE(store);
        CHECK(store->root() == std::filesystem::canonical(c.root()).string());
        require_store_accepted(check_store(*store).value);
    }
    SECTION("a relative path") {
        StoreCase c;
        std::string relative = std::filesystem::relative(c.root(), std::filesystem::current_path()).string();
        auto store = Store::open(relative);
        REQUIRE(store);
        require_store_accepted(check_store(*store).value);
    }
    SECTION("a path that does not exist") {
        auto store = Store::open("/nonexistent/ollama/models");
        REQUIRE(!store);
        CHECK(store.error().code == ErrorCode::E_NOT_FOUND);
    }
    SECTION("a file") {
        StoreCase c;
        auto store = Store::open(c.b.blob_path(c.b.tiny_model_layer()));
        REQUIRE(!store);
        CHECK(store.error().code == ErrorCode::E_NOT_DIRECTORY);
    }
}

TEST_CASE("O20 the store changing while it is checked", "[ollama]") {
    GgufBuilder g;
    const uint64_t n = (64ull << 20) / 4;
    g.header(1, 1).kv_string("general.architecture", "llama").tensor_info("w", {n}, 0, 0).pad_to(32).zeros(n * 4);
    for (int variant = 0; variant < 4; ++variant) {
        INFO("variant " << variant);
        StoreCase c;
        LayerSpec model = c.b.blob(kModelMediaType, g.bytes);
        std::string manifest = c.b.root() + "/manifests/" + kEvilRel;
        c.evil({model});
        auto store = Store::open(c.root());
        REQUIRE(store);
        StoreCheckReport r;
        auto start = std::chrono::steady_clock::now();
        std::thread worker([&] { r = check_store(*store).value; });
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const std::string blob = c.b.blob_path(model);
        if (variant == 0) std::filesystem::remove(blob);
        if (variant == 1) write_file(blob, std::string(1000, 'o'));
        if (variant == 2) std::filesystem::resize_file(blob, 100);
        if (variant == 3) write_file(manifest, "{\"schemaVersion\":");
        worker.join();
        CHECK(seconds_since(start) < 20.0 * kSlowdown);
        INFO(describe(r));
        REQUIRE(find_model(r, "tiny:latest"));
        CHECK(find_model(r, "tiny:latest")->errors == 0);
    }
}

TEST_CASE("O21 huge sizes and tensors outside the blob", "[ollama]") {
    StoreCase c;
    SECTION("layer size 10 TiB") {
        LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
        model.size = 10ull << 40;
        std::string text = c.evil({model});
        const Diagnostic& d =
            require_evil_rejected(check_root(c.root()), "E_SIZE_MISMATCH", field("layers[0].size"), at(text, std::to_string(model.size)));
        CHECK(d.message.find("10995116277760") != std::string::npos);
    }
    SECTION("GGUF tensor data past the blob's end (G51 in the store)") {
        GgufBuilder g;
        g.header(1, 1).kv_string("general.architecture", "llama").tensor_info("w", {1000000}, 0, 0).pad_to(32).f32_run(32);
        LayerSpec model = c.b.blob(kModelMediaType, g.bytes);
        c.evil({model});
        const Diagnostic& d = require_evil_rejected(check_root(c.root()), "E_TENSOR_OUT_OF_BOUNDS", blob_field(model, "tensors[0]"));
        CHECK(d.format == "GGUF");
    }
}

TEST_CASE("O22 blob permissions are informational warnings", "[ollama]") {
    StoreCase c;
    LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
    c.evil({model});
    const std::string blob = c.b.blob_path(model);
    REQUIRE(::link(blob.c_str(), (c.root() + "/hardlink").c_str()) == 0);
    REQUIRE(::chmod(blob.c_str(), 0666) == 0);
    std::vector<std::string> expected = {"W_BLOB_HARDLINKED", "W_BLOB_WORLD_WRITABLE"};
    if (::chown(blob.c_str(), ::geteuid() + 4242, static_cast<gid_t>(-1)) == 0)
        expected.push_back("W_BLOB_OTHER_OWNER");
    else
        WARN("cannot chown here (needs root); the other-owner variant is skipped");
    StoreCheckReport r = check_root(c.root());
    require_store_accepted(r, expected);
    for (const Diagnostic& d : r.diagnostics) CHECK(d.field == field("layers[0]"));
}

TEST_CASE("blobs/ reached through a symlink: followed inside the root, every blob outside it is E_OUTSIDE_ROOT", "[ollama]") {
    StoreCase c;
    LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
    c.evil({model});
    const std::string blobs = c.root() + "/blobs";
    SECTION("to a folder inside the root") {
        std::filesystem::rename(blobs, c.root() + "/real-blobs");
        std::filesystem::create_directory_symlink("real-blobs", blobs);
        require_store_accepted(check_root(c.root()));
        auto store = Store::open(c.root());
        REQUIRE(store);
        BlobLookup found = store->find_blob(*parse_blob_digest(model.digest));
        REQUIRE(found.found());
        CHECK(found.path == std::filesystem::canonical(c.root()).string() + "/real-blobs/sha256-" + model.digest.substr(7));
    }
    // Every model's blobs are behind the link, so every model is rejected.
    const auto error_at = [](const StoreCheckReport& r, const std::string& code, const std::string& where) -> const Diagnostic* {
        for (const ModelCheck& m : r.models) CHECK(m.errors > 0);
        for (const Diagnostic& d : r.diagnostics)
            if (d.severity == Severity::error && code_name(d.code) == code && d.field == where) return &d;
        return nullptr;
    };
    SECTION("to a folder outside the root") {
        TempDir outside;
        std::filesystem::rename(blobs, outside.file("blobs"));
        std::filesystem::create_directory_symlink(outside.file("blobs"), blobs);
        StoreCheckReport r = check_root(c.root());
        const Diagnostic* d = error_at(r, "E_OUTSIDE_ROOT", field("layers[0]"));
        REQUIRE(d);
        CHECK(d->message == blob_field(model, "") + ": resolves to " + std::filesystem::canonical(outside.file("blobs")).string() +
                                "/sha256-" + model.digest.substr(7) + ", outside the store root");
    }
    SECTION("dangling") {
        std::filesystem::remove_all(blobs);
        std::filesystem::create_directory_symlink(c.root() + "/nowhere", blobs);
        StoreCheckReport r = check_root(c.root());
        CHECK(error_at(r, "E_BLOB_MISSING", field("layers[0]")));
    }
}
