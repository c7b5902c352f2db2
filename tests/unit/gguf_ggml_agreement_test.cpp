// Our reader against ggml's own gguf API on every upstream vocab GGUF in the pinned llama.cpp
// source: identical keys, types, values, tensor names, types, shapes and offsets.
#include <catch2/catch.hpp>

#include <gguf.h>

#include "ggml_agreement.h"
#include "mlens/formats/gguf_reader.h"
#include "test_paths.h"

using namespace mlens;

TEST_CASE("every upstream vocab GGUF parses exactly as ggml parses it", "[gguf][upstream]") {
    auto files = test::upstream_vocab_files();
    REQUIRE(files.size() >= 19);
    for (const std::string& path : files) {
        INFO(path);
        auto ours = open_gguf(path);
        REQUIRE(ours.ok());
        CHECK(ours->error_count() == 0);
        gguf_init_params params{/*no_alloc=*/true, /*ctx=*/nullptr};
        gguf_context* g = gguf_init_from_file(path.c_str(), params);
        REQUIRE(g != nullptr);
        CHECK(test::ggml_disagreement(*ours, g) == "");
        gguf_free(g);
    }
}
