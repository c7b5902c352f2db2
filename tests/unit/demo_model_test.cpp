// The demo models our writer produces are real: our reader finds what was written, and the
// pinned llama.cpp loads them and generates from them.
#include <catch2/catch.hpp>

#include <llama.h>

#include <cmath>
#include <vector>

#include "build_paths.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/model/summary.h"

using namespace mlens;

namespace {

const char* const kDemoFiles[] = {"tiny-llama-f32.gguf", "tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf"};

std::string demo_path(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

void quiet_log(ggml_log_level, const char*, void*) {}

}  // namespace

TEST_CASE("demo models carry the upstream tokenizer and the expected tensors", "[demo]") {
    for (const char* name : kDemoFiles) {
        INFO(name);
        auto model = open_gguf(demo_path(name));
        REQUIRE(model.ok());
        CHECK(model->diagnostics.empty());
        ModelSummary s = summarize(*model);
        CHECK(s.architecture == "llama");
        CHECK(s.tensor_count == 21);
        CHECK(model->find("tokenizer.ggml.tokens")->value.array->count == 32000);
        CHECK(model->find("tokenizer.ggml.tokens")->value.array->string_at(1) == "<s>");
        CHECK(s.parameters == 2u * 64 * 32000 + 64 + 2 * (2 * 64 + 64 * 64 * 2 + 64 * 32 * 2 + 3 * 64 * 192));
    }
    auto q8 = open_gguf(demo_path("tiny-llama-q8_0.gguf"));
    CHECK(q8->find_tensor("token_embd.weight")->type.name == "Q8_0");
    CHECK(q8->find_tensor("output_norm.weight")->type.name == "F32");
    CHECK(summarize(*q8).file_type_name == "Q8_0");
}

TEST_CASE("llama.cpp loads every demo model and decodes a prompt", "[demo][llama]") {
    llama_log_set(quiet_log, nullptr);
    llama_backend_init();
    for (const char* name : kDemoFiles) {
        INFO(name);
        llama_model_params mp = llama_model_default_params();
        llama_model* model = llama_model_load_from_file(demo_path(name).c_str(), mp);
        REQUIRE(model != nullptr);
        const llama_vocab* vocab = llama_model_get_vocab(model);
        CHECK(llama_vocab_n_tokens(vocab) == 32000);
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx = 64;
        cp.n_batch = 64;
        cp.n_threads = 1;
        llama_context* ctx = llama_init_from_model(model, cp);
        REQUIRE(ctx != nullptr);
        std::vector<llama_token> tokens(32);
        const char* prompt = "Hello world";
        int n = llama_tokenize(vocab, prompt, 11, tokens.data(), 32, true, false);
        REQUIRE(n > 1);
        CHECK(tokens[0] == 1);  // BOS of the llama SPM vocabulary
        tokens.resize(n);
        REQUIRE(llama_decode(ctx, llama_batch_get_one(tokens.data(), n)) == 0);
        const float* logits = llama_get_logits_ith(ctx, -1);
        REQUIRE(logits != nullptr);
        bool finite = true;
        float spread = 0;
        for (int i = 0; i < 32000; ++i) {
            finite = finite && std::isfinite(logits[i]);
            spread = std::max(spread, std::fabs(logits[i] - logits[0]));
        }
        CHECK(finite);
        CHECK(spread > 0.0f);
        llama_free(ctx);
        llama_model_free(model);
    }
    llama_backend_free();
}
