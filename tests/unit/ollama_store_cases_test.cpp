// Store cases O1 and O01–O11 (malformed-inputs.md B3): each store holds O1's `tiny` plus the
// hostile `evil` (or hostile entries) and is checked as one directory; `evil` must be rejected
// naming the field while `tiny` validates, and the check changes nothing on disk.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "gguf_builder.h"
#include "mlens/ollama/store.h"
#include "ollama_store_builder.h"
#include "ollama_store_checks.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

uint64_t at(const std::string& text, const std::string& needle, size_t nth = 0) {
    size_t p = text.find(needle);
    for (size_t i = 0; i < nth && p != std::string::npos; ++i) p = text.find(needle, p + 1);
    REQUIRE(p != std::string::npos);
    return p;
}

// A GGUF other than T1 (so evil's blob is not tiny's): T1 plus one UINT8 KV.
std::vector<uint8_t> other_gguf(uint8_t v = 1) {
    return t1_plus_kvs(1, [v](GgufBuilder& g) { g.kv_u8("test.variant", v); });
}

std::string field(const std::string& f) { return std::string(kEvilManifest) + " " + f; }

}  // namespace

TEST_CASE("O1 the valid store validates, with every blob hashed and parsed", "[ollama]") {
    StoreCase c;
    auto before = tree_snapshot(c.root());
    StoreCheckReport r = check_root(c.root());
    require_store_accepted(r);
    CHECK(r.diagnostics.empty());
    REQUIRE(r.models.size() == 1);
    CHECK(r.models[0].name.display() == "tiny:latest");
    CHECK(r.models[0].manifest_path == "manifests/registry.ollama.ai/library/tiny/latest");
    CHECK(r.blobs_checked == 2);
    CHECK(r.bytes_hashed == 256 + c.b.tiny_config_layer().size);
    CHECK(tree_snapshot(c.root()) == before);
}

TEST_CASE("O01 traversal in a layer digest is E_BAD_DIGEST before any path is built", "[ollama]") {
    const std::vector<uint8_t> t1 = t1_bytes();
    const std::string t1_hex = sha256_hex(t1);
    for (const std::string& digest :
         std::vector<std::string>{std::string("sha256:../../../../etc/ld.so.preload"), std::string("sha256-../x"), "../sha256-" + t1_hex,
                                  "sha256:" + t1_hex + "/../../x"}) {
        INFO(digest);
        StoreCase c;
        // Decoys where a naive join would land, with T1's content.
        write_file(c.root() + "/blobs/sha256-../x", std::string(t1.begin(), t1.end()));
        write_file(c.root() + "/sha256-" + t1_hex, std::string(t1.begin(), t1.end()));
        write_file(c.root() + "/x", std::string(t1.begin(), t1.end()));
        LayerSpec layer = c.b.tiny_model_layer();
        layer.digest = digest;
        std::string text = c.evil({layer});
        auto before = tree_snapshot(c.root());
        StoreCheckReport r = check_root(c.root());
        require_evil_rejected(r, "E_BAD_DIGEST", field("layers[0].digest"), at(text, "\"" + digest));
        CHECK(r.error_count() == 1);
        CHECK(tree_snapshot(c.root()) == before);
    }
}

TEST_CASE("O02 digest variants outside the grammar are E_BAD_DIGEST", "[ollama]") {
    const std::vector<uint8_t> t1 = t1_bytes();
    const std::string hex = sha256_hex(t1);
    std::string upper = hex;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const std::string sha512_hex = hex + hex;
    // As written inside the JSON string.
    const std::vector<std::string> digests = {"sha256:" + hex.substr(1),
                                              "sha256:" + hex + "0",
                                              "sha256:" + upper,
                                              "sha512:" + sha512_hex,
                                              "sha256:",
                                              "sha256:" + hex + "\\n",
                                              "sha256:" + hex + " ",
                                              "sha256:" + hex.substr(0, 32) + "\\u0000" + hex.substr(33),
                                              "sha256:" + hex.substr(0, 61) + "\xEF\xBC\x90",
                                              "sha256:" + hex.substr(0, 62) + "\xD9\xA0"};
    for (const std::string& digest : digests) {
        INFO(digest);
        StoreCase c;
        write_file(c.root() + "/blobs/sha256-" + upper, std::string(t1.begin(), t1.end()));
        write_file(c.root() + "/blobs/sha512-" + sha512_hex, std::string(t1.begin(), t1.end()));
        LayerSpec layer = c.b.tiny_model_layer();
        layer.digest = digest;
        std::string text = c.evil({layer});
        StoreCheckReport r = check_root(c.root());
        require_evil_rejected(r, "E_BAD_DIGEST", field("layers[0].digest"), text.find("\"" + digest, text.find("\"layers\"")));
    }
}

TEST_CASE("O03 dash digests are accepted - legacy colon blob names are read, never renamed", "[ollama]") {
    SECTION("manifest digests written sha256-<hex>") {
        StoreCase c;
        LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
        LayerSpec config = c.b.tiny_config_layer();
        model.digest[6] = '-';
        config.digest[6] = '-';
        c.b.write_manifest(kEvilRel, manifest_json(config, {model}));
        StoreCheckReport r = check_root(c.root());
        require_store_accepted(r);
        CHECK(find_model(r, "evil:latest")->errors == 0);
    }
    SECTION("only blobs/sha256:<hex> exists") {
        StoreCase c;
        LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
        std::string dash = c.b.blob_path(model);
        std::string legacy = c.root() + "/blobs/" + model.digest;
        std::filesystem::rename(dash, legacy);
        c.evil({model});
        auto before = tree_snapshot(c.root());
        StoreCheckReport r = check_root(c.root());
        require_store_accepted(r, {"W_LEGACY_BLOB_NAME"});
        for (const Diagnostic& d : r.diagnostics)
            if (d.code == ErrorCode::W_LEGACY_BLOB_NAME) {
                CHECK(d.field == field("layers[0]"));
                CHECK(d.message.find("legacy") != std::string::npos);
            }
        CHECK(tree_snapshot(c.root()) == before);
        CHECK(std::filesystem::exists(legacy));
        CHECK(!std::filesystem::exists(dash));
    }
}

TEST_CASE("O04 a missing blob is E_BLOB_MISSING naming the layer", "[ollama]") {
    StoreCase c;
    auto bytes = other_gguf();
    LayerSpec missing{std::string(kModelMediaType), "sha256:" + sha256_hex(bytes), bytes.size()};
    c.evil({missing});
    StoreCheckReport r = check_root(c.root());
    const Diagnostic& d = require_evil_rejected(r, "E_BLOB_MISSING", field("layers[0]"));
    CHECK(!d.offset);
    CHECK(d.message.find(sha256_hex(bytes)) != std::string::npos);
}

TEST_CASE("O05 content that does not match its digest is E_DIGEST_MISMATCH", "[ollama]") {
    StoreCase c;
    auto bytes = other_gguf();
    LayerSpec model = c.b.blob(kModelMediaType, bytes);
    bytes.back() ^= 0x01;
    write_file(c.b.blob_path(model), std::string(bytes.begin(), bytes.end()));
    std::string text = c.evil({model});
    StoreCheckReport r = check_root(c.root());
    const Diagnostic& d = require_evil_rejected(r, "E_DIGEST_MISMATCH", field("layers[0].digest"), at(text, "\"" + model.digest));
    CHECK(d.message.find("expected " + model.digest) != std::string::npos);
    CHECK(d.message.find("actual sha256:" + sha256_hex(bytes)) != std::string::npos);
}

TEST_CASE("O06 one blob as config and as a layer is verified for each use", "[ollama]") {
    StoreCase c;
    std::string config = config_json("gguf", "evilfamily", "F32");
    LayerSpec cfg = c.b.blob(kImageConfigMediaType, config);
    LayerSpec as_template = cfg;
    as_template.media_type = std::string(kTemplateMediaType);
    LayerSpec model = c.b.blob(kModelMediaType, other_gguf());
    std::string text = manifest_json(cfg, {model, as_template});
    c.b.write_manifest(kEvilRel, text);
    SECTION("intact") { require_store_accepted(check_root(c.root())); }
    SECTION("corrupted: every use fails") {
        std::string bad = config;
        bad[bad.find("evilfamily")] = 'E';
        write_file(c.b.blob_path(cfg), bad);
        StoreCheckReport r = check_root(c.root());
        require_evil_rejected(r, "E_DIGEST_MISMATCH", field("config.digest"), at(text, "\"" + cfg.digest));
        require_evil_rejected(r, "E_DIGEST_MISMATCH", field("layers[1].digest"), at(text, "\"" + cfg.digest, 1));
        CHECK(r.blobs_checked == 4);  // tiny's two, evil's model, and the shared blob once
    }
}

TEST_CASE("O07 blob symlink loops are E_SYMLINK_LOOP without hanging", "[ollama]") {
    auto bytes = other_gguf();
    const std::string name = "sha256-" + sha256_hex(bytes);
    for (int variant = 0; variant < 2; ++variant) {
        INFO("variant " << variant);
        StoreCase c;
        std::string blobs = c.root() + "/blobs/";
        if (variant == 0) {
            REQUIRE(::symlink(name.c_str(), (blobs + name).c_str()) == 0);
        } else {
            REQUIRE(::symlink("other", (blobs + name).c_str()) == 0);
            REQUIRE(::symlink(name.c_str(), (blobs + "other").c_str()) == 0);
        }
        c.evil({{std::string(kModelMediaType), "sha256:" + sha256_hex(bytes), bytes.size()}});
        StoreCheckReport r = check_root(c.root(), 10.0);
        require_evil_rejected(r, "E_SYMLINK_LOOP", field("layers[0]"));
    }
}

TEST_CASE("O08 a blob that is not a regular file is refused before any blocking open", "[ollama]") {
    auto bytes = other_gguf();
    const std::string name = "sha256-" + sha256_hex(bytes);
    const char* kinds[] = {"fifo", "/dev/random", "/dev/zero", "socket", "directory", "character device"};
    for (const char* kind : kinds) {
        INFO(kind);
        StoreCase c;
        std::string path = c.root() + "/blobs/" + name;
        std::string k = kind;
        int socket_fd = -1;
        if (k == "fifo") {
            REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
        } else if (k[0] == '/') {
            REQUIRE(::symlink(kind, path.c_str()) == 0);
        } else if (k == "socket") {
            socket_fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un addr{};
            addr.sun_family = AF_UNIX;
            REQUIRE(path.size() < sizeof addr.sun_path);
            std::strcpy(addr.sun_path, path.c_str());
            REQUIRE(::bind(socket_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        } else if (k == "directory") {
            std::filesystem::create_directory(path);
        } else if (::mknod(path.c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0) {
            WARN("cannot create a character device here (needs root); that variant is skipped");
            continue;
        }
        c.evil({{std::string(kModelMediaType), "sha256:" + sha256_hex(bytes), bytes.size()}});
        StoreCheckReport r = check_root(c.root(), 10.0);
        const Diagnostic& d = require_evil_rejected(r, "E_NOT_REGULAR_FILE", field("layers[0]"));
        CHECK(d.message.find("not a regular file") != std::string::npos);
        if (socket_fd >= 0) ::close(socket_fd);
    }
}

TEST_CASE("O09 directory symlinks under manifests/ are never followed", "[ollama]") {
    StoreCase c;
    std::string m = c.root() + "/manifests/";
    REQUIRE(::symlink("/", (m + "evil").c_str()) == 0);
    REQUIRE(::symlink("../..", (m + "registry.ollama.ai/a").c_str()) == 0);
    std::filesystem::create_directories(m + "registry.ollama.ai/loopns");
    REQUIRE(::symlink(".", (m + "registry.ollama.ai/loopns/m").c_str()) == 0);
    REQUIRE(::symlink("tiny", (m + "registry.ollama.ai/library/tinylink").c_str()) == 0);
    StoreCheckReport r = check_root(c.root(), 10.0);
    require_store_accepted(r, {"W_SYMLINK_SKIPPED"});
    REQUIRE(r.models.size() == 1);
    size_t skipped = 0;
    for (const Diagnostic& d : r.diagnostics) skipped += d.code == ErrorCode::W_SYMLINK_SKIPPED;
    CHECK(skipped == 4);
}

TEST_CASE("O10 manifest paths outside the grammar are skipped with W_INVALID_NAME", "[ollama]") {
    StoreCase c;
    std::string tiny = manifest_json(c.b.tiny_config_layer(), {c.b.tiny_model_layer()});
    const std::string ns81(81, 'n'), model81(81, 'm');
    const std::vector<std::string> paths = {"registry.ollama.ai/library/-evil/latest",
                                            "registry.ollama.ai/library/.hidden/latest",
                                            "registry.ollama.ai/library/sp ace/latest",
                                            "registry.ollama.ai/library/m\xC3\xB6"
                                            "del/latest",
                                            "registry.ollama.ai/library/evil/lat$est",
                                            "registry.ollama.ai/" + ns81 + "/evil/latest",
                                            "registry.ollama.ai/library/" + model81 + "/latest",
                                            "registry.ollama.ai/na:me/evil/latest",
                                            "-host/library/evil/latest",
                                            "registry.ollama.ai/library/tiny2/latest/extra"};
    for (const std::string& p : paths) c.b.write_manifest(p, tiny);
    StoreCheckReport r = check_root(c.root());
    require_store_accepted(r, {"W_INVALID_NAME"});
    REQUIRE(r.models.size() == 1);
    std::vector<std::string> named;
    for (const Diagnostic& d : r.diagnostics)
        if (d.code == ErrorCode::W_INVALID_NAME) named.push_back(d.field);
    CHECK(named.size() == paths.size());
    for (const char* expected : {"manifests/registry.ollama.ai/library/-evil", "manifests/registry.ollama.ai/library/.hidden",
                                 "manifests/registry.ollama.ai/library/m\xC3\xB6"
                                 "del",
                                 "manifests/registry.ollama.ai/library/evil/lat$est", "manifests/-host",
                                 "manifests/registry.ollama.ai/na:me", "manifests/registry.ollama.ai/library/tiny2/latest"})
        CHECK(std::find(named.begin(), named.end(), expected) != named.end());
}

TEST_CASE("non-portable names are kept with a warning", "[ollama]") {
    StoreCase c;
    std::string tiny = manifest_json(c.b.tiny_config_layer(), {c.b.tiny_model_layer()});
    c.b.write_manifest("registry.ollama.ai/library/con/latest", tiny);
    c.b.write_manifest("registry.ollama.ai/library/Tiny/latest", tiny);
    StoreCheckReport r = check_root(c.root());
    require_store_accepted(r, {"W_NONPORTABLE_NAME"});
    CHECK(r.models.size() == 3);
}

TEST_CASE("O11 an enormous manifest is refused from its size, unread", "[ollama]") {
    SECTION("10 MB of valid JSON with a padding field") {
        StoreCase c;
        std::string text = manifest_json(c.b.tiny_config_layer(), {c.b.tiny_model_layer()});
        text.insert(1, "\"padding\":\"" + std::string(10'000'000, 'x') + "\",");
        c.b.write_manifest(kEvilRel, text);
        const Diagnostic& d = require_evil_rejected(check_root(c.root()), "E_MANIFEST_TOO_LARGE", kEvilManifest);
        CHECK(d.message.find("max_manifest_bytes=4194304") != std::string::npos);
    }
    SECTION("1 GiB, sparse") {
        StoreCase c;
        std::string path = c.b.write_manifest(kEvilRel, "{");
        std::filesystem::resize_file(path, 1ull << 30);
        require_evil_rejected(check_root(c.root(), 2.0), "E_MANIFEST_TOO_LARGE", kEvilManifest);
    }
}

TEST_CASE("blob symlinks: inside the root they resolve, outside they are E_OUTSIDE_ROOT", "[ollama]") {
    auto bytes = other_gguf();
    const std::string name = "sha256-" + sha256_hex(bytes);
    LayerSpec layer(std::string(kModelMediaType), "sha256:" + sha256_hex(bytes), bytes.size());
    SECTION("to a file elsewhere in the store") {
        StoreCase c;
        write_file(c.root() + "/elsewhere/model.gguf", std::string(bytes.begin(), bytes.end()));
        REQUIRE(::symlink("../elsewhere/model.gguf", (c.root() + "/blobs/" + name).c_str()) == 0);
        c.evil({layer});
        require_store_accepted(check_root(c.root()));
    }
    SECTION("to a file outside the store, with the right content") {
        StoreCase c;
        TempDir outside;
        write_file(outside.file("model.gguf"), std::string(bytes.begin(), bytes.end()));
        REQUIRE(::symlink(outside.file("model.gguf").c_str(), (c.root() + "/blobs/" + name).c_str()) == 0);
        c.evil({layer});
        StoreCheckReport r = check_root(c.root());
        Diagnostic d = require_evil_rejected(r, "E_OUTSIDE_ROOT", field("layers[0]"));
        CHECK(d.message.find("outside the store root") != std::string::npos);
    }
    SECTION("a dangling symlink is a missing blob") {
        StoreCase c;
        REQUIRE(::symlink("nowhere", (c.root() + "/blobs/" + name).c_str()) == 0);
        c.evil({layer});
        require_evil_rejected(check_root(c.root()), "E_BLOB_MISSING", field("layers[0]"));
    }
}

TEST_CASE("a manifest that is a FIFO or a symlink is skipped without opening it", "[ollama]") {
    StoreCase c;
    std::filesystem::create_directories(c.root() + "/manifests/registry.ollama.ai/library/evil");
    REQUIRE(::mkfifo((c.root() + "/manifests/" + kEvilRel).c_str(), 0600) == 0);
    REQUIRE(::symlink("latest", (c.root() + "/manifests/registry.ollama.ai/library/tiny/alias").c_str()) == 0);
    StoreCheckReport r = check_root(c.root(), 5.0);
    require_store_accepted(r, {"W_NOT_REGULAR_FILE", "W_SYMLINK_SKIPPED"});
    CHECK(r.models.size() == 1);
    auto store = Store::open(c.root());
    REQUIRE(store);
    StoredManifest fifo = store->read_manifest(*parse_model_reference("evil"));
    CHECK(!fifo.found);
    REQUIRE(!fifo.manifest.diagnostics.empty());
    CHECK(fifo.manifest.diagnostics[0].code == ErrorCode::E_NOT_REGULAR_FILE);
}
