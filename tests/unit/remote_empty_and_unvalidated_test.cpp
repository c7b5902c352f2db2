// Remote files at the edges of what a Range request can say: an empty file (answered 416 with
// "Content-Range: bytes */0"), alone and as one blob among a registry model's others, and a file
// served without a validator (no ETag, no Last-Modified) that changes on the server.
#include <catch2/catch.hpp>

#include "loopback_server.h"
#include "mlens/ollama/registry_model.h"
#include "mlens/ollama/registry_view.h"
#include "mlens/remote/range_cache.h"
#include "mlens/remote/remote_source.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::string pattern(size_t n) {
    std::string bytes(n, '\0');
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(i * 131 + (i >> 9));
    return bytes;
}

}  // namespace

TEST_CASE("an empty remote file opens as an empty source in one request - never an HTTP error", "[remote]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    RemoteOptions uncached, cached;
    cached.cache = RangeCache::open();
    // The cache keeps a version of before the file was emptied: the open asks for one byte.
    server.serve("/empty.bin", "a version of before the file was emptied");
    REQUIRE(open_remote(server.url("/empty.bin"), cached));
    server.serve("/empty.bin", "");
    for (const RemoteOptions* options : {&uncached, &cached}) {
        server.clear_log();
        auto source = open_remote(server.url("/empty.bin"), *options);
        REQUIRE(source);
        CHECK((*source)->size() == 0);
        uint8_t byte = 0;
        CHECK((*source)->read(0, 0, &byte));
        CHECK_FALSE((*source)->read(0, 1, &byte));
        const auto log = server.log();
        REQUIRE(log.size() == 1);
        CHECK(log[0].range == (options == &cached ? "bytes=0-0" : "bytes=0-524287"));
        CHECK(log[0].status == 416);
    }
}

TEST_CASE("an empty blob among a registry model's layers is an empty text and the blobs after it are still fetched", "[remote][ollama]") {
    test::PrivateHttpCache cache;
    test::TempDir root;
    test::OllamaStoreBuilder store(root.path());
    store.add_tiny();
    store.add_model("empty-license",
                    {store.tiny_model_layer(), store.blob(test::kLicenseMediaType, ""),
                     store.blob(test::kTemplateMediaType, "{{ .Prompt }}"), store.blob(test::kSystemMediaType, "Answer briefly.")},
                    test::config_json("gguf", "llama", "F32"));
    test::LoopbackServer registry;
    test::serve_store_as_registry(registry, root.path());
    test::ScopedEnv address("OLLAMA_REGISTRY", registry.base_url());
    auto reference = parse_registry_reference("empty-license");
    REQUIRE(reference);
    auto manifest = fetch_registry_manifest(*reference);
    REQUIRE(manifest);
    const ManifestView view = view_registry_model(*reference, *manifest);
    REQUIRE(view.layers.size() == 4);
    for (size_t i = 1; i < 4; ++i) {
        INFO("layer " << i << ": " << (view.layers[i].text_error ? view.layers[i].text_error->message : std::string("fetched")));
        REQUIRE_FALSE(view.layers[i].text_error);
        REQUIRE(view.layers[i].text);
    }
    CHECK(view.layers[1].text->size == 0);
    CHECK(view.layers[2].text->text == "{{ .Prompt }}");
    CHECK(view.layers[3].text->text == "Answer briefly.");
    CHECK_FALSE(view.config_error);
    CHECK(view.config);
}

TEST_CASE("a file served without a validator fails a read with E_REMOTE_CHANGED once its size changes and is never cached",
          "[remote][cache]") {
    test::PrivateHttpCache cache;
    test::LoopbackServer server;
    const std::string bytes = pattern(3u << 20);
    RemoteOptions options;
    options.cache = RangeCache::open();
    // Longer; shorter than the read's offset and emptied (then the server answers 416 "bytes */LENGTH").
    for (const std::string& changed : {bytes + "more", bytes.substr(0, 1u << 20), std::string()}) {
        server.serve("/plain.bin", bytes);
        server.set_validators("/plain.bin", "", "", "");
        auto source = open_remote(server.url("/plain.bin"), options);
        REQUIRE(source);
        char part[16];
        REQUIRE((*source)->read(100, 16, part));
        CHECK(std::string(part, 16) == bytes.substr(100, 16));
        server.serve("/plain.bin", changed);
        server.set_validators("/plain.bin", "", "", "");
        CHECK_FALSE((*source)->read(2u << 20, 16, part));
        CHECK((*source)->read_failure() ==
              "E_REMOTE_CHANGED: " + server.url("/plain.bin") + ": the file changed on the server since it was opened");
        CHECK(options.cache->contents().entries.empty());
    }
}
