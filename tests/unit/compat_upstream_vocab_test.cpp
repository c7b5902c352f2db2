// Non-Ollama files: every vocab GGUF in the pinned llama.cpp source gives an empty plan on both
// sides, except ggml-vocab-llama-bpe, which meets the Llama-3 metadata fix's conditions (spec
// §1.7: that fix applies to any file meeting them; its eos_token_id is 128001).
#include <catch2/catch.hpp>

#include "compat_fixture.h"
#include "mlens/formats/gguf_reader.h"

using namespace mlens;
using namespace mlens::compat;
using namespace mlens::test;

TEST_CASE("upstream vocab GGUFs give empty plans that say what was checked", "[compat]") {
    auto files = upstream_vocab_files();
    REQUIRE(files.size() >= 19);
    size_t empty = 0;
    for (const std::string& path : files) {
        INFO(path);
        auto m = open_gguf(path);
        REQUIRE(m);
        RewritePlan plan = plan_compat(*m);
        CHECK(plan.clip.empty());
        CHECK(plan.text.checks.size() == 22);
        if (path.find("ggml-vocab-llama-bpe.gguf") != std::string::npos) {
            CHECK(plan.text.handlers == std::vector<std::string>{"handle_llama3_metadata"});
            CHECK(plan.text.checks[19].detail == "marker: Llama-3 vocab with eos_token_id 128001");
            CHECK(result_keys(*m, plan.text) ==
                  keys_after(*m, {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eos_token_ids"}));
            CHECK(typed(result_value(*m, plan.text, "tokenizer.ggml.eos_token_id")) == "UINT32 128009");
            CHECK(typed(result_value(*m, plan.text, "tokenizer.ggml.pre")) == "STRING llama-bpe");
            continue;
        }
        CHECK(plan.empty());
        CHECK(plan.text.handlers.empty());
        CHECK(plan.text.summary().starts_with("no handler fired for architecture"));
        CHECK(upstream_view(*m, plan.text).metadata.size() == m->metadata.size());
        ++empty;
    }
    CHECK(empty == files.size() - 1);
}
