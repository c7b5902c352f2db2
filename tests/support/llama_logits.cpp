#include "llama_logits.h"

#include <llama.h>

#include <cmath>
#include <limits>
#include <mutex>

namespace mlens::test {

namespace {

void quiet_log(ggml_log_level, const char*, void*) {}

void init_backend_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        llama_log_set(quiet_log, nullptr);
        llama_backend_init();
    });
}

}  // namespace

llama_context_params context_params(uint32_t n_ctx, int32_t n_threads) {
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = n_ctx;
    cp.n_ubatch = n_ctx;
    cp.n_threads = n_threads;
    cp.n_threads_batch = n_threads;
    return cp;
}

LlamaLogits llama_logits(const std::string& path, const std::vector<int32_t>& tokens) {
    init_backend_once();
    LlamaLogits out;
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model* model = llama_model_load_from_file(path.c_str(), mp);
    if (!model) {
        out.error = "llama.cpp could not load " + path;
        return out;
    }
    llama_context* ctx = llama_init_from_model(model, context_params(64, 1));
    if (!ctx) {
        out.error = "llama.cpp could not create a context for " + path;
        llama_model_free(model);
        return out;
    }
    out.n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_batch batch = llama_batch_init(static_cast<int32_t>(tokens.size()), 0, 1);
    for (size_t i = 0; i < tokens.size(); ++i) {
        batch.token[i] = tokens[i];
        batch.pos[i] = static_cast<llama_pos>(i);
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = static_cast<int32_t>(tokens.size());
    if (llama_decode(ctx, batch) != 0) {
        out.error = "llama_decode failed for " + path;
    } else {
        for (size_t i = 0; i < tokens.size(); ++i) {
            const float* row = llama_get_logits_ith(ctx, static_cast<int32_t>(i));
            out.logits.insert(out.logits.end(), row, row + out.n_vocab);
        }
    }
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    return out;
}

float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size() || a.empty()) return std::numeric_limits<float>::infinity();
    float m = 0.0f;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

}  // namespace mlens::test
