// infer_bench MODEL [THREADS] [TOKENS] [REPEATS]
//
// Generation speed through ModelLens (core/infer generate, greedy, top-5 candidates per step)
// against llama.cpp's own generation loop on the same model, context settings and thread count:
// the loop of llama.cpp's `simple` example (a greedy sampler chain, llama_sampler_sample, the
// token's piece, llama_decode), timed by llama.cpp's own performance counters (eval time per
// generated token). Also prints a bare loop (argmax, nothing else per step) as the decode floor,
// and the cost of layer capture. Each figure is the median over REPEATS runs, in tokens/s of
// time inside llama_decode.
#include <llama.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mlens/infer/generate.h"
#include "mlens/infer/layer_capture.h"

namespace {

const char* const kPrompt = "Once upon a time, in a small village by the sea, there lived";

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// Tokenizes the prompt and decodes it; returns false on failure.
bool start(llama_context* ctx, const llama_vocab* vocab) {
    llama_memory_clear(llama_get_memory(ctx), true);
    std::vector<llama_token> tokens(256);
    int32_t n = llama_tokenize(vocab, kPrompt, static_cast<int32_t>(std::char_traits<char>::length(kPrompt)),
                               tokens.data(), 256, true, true);
    tokens.resize(static_cast<size_t>(n));
    return llama_decode(ctx, llama_batch_get_one(tokens.data(), n)) == 0;
}

// llama.cpp's own loop, as its `simple` example writes it; the rate is from llama.cpp's counters.
double llama_own_loop(llama_context* ctx, const llama_vocab* vocab, int n_tokens) {
    if (!start(ctx, vocab)) return 0.0;
    llama_sampler* sampler = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(sampler, llama_sampler_init_greedy());
    llama_perf_context_reset(ctx);
    char piece[256];
    for (int i = 0; i + 1 < n_tokens; ++i) {
        llama_token next = llama_sampler_sample(sampler, ctx, -1);
        volatile int32_t length = llama_token_to_piece(vocab, next, piece, sizeof piece, 0, true);
        (void)length;
        if (llama_decode(ctx, llama_batch_get_one(&next, 1)) != 0) break;
    }
    llama_sampler_free(sampler);
    const llama_perf_context_data perf = llama_perf_context(ctx);
    return perf.n_eval > 0 && perf.t_eval_ms > 0 ? perf.n_eval * 1000.0 / perf.t_eval_ms : 0.0;
}

// The least a loop can do: argmax of the logits, then decode.
double bare_loop(llama_context* ctx, const llama_vocab* vocab, int n_tokens) {
    if (!start(ctx, vocab)) return 0.0;
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    double ms = 0.0;
    for (int i = 0; i + 1 < n_tokens; ++i) {
        const float* logits = llama_get_logits_ith(ctx, -1);
        llama_token best = static_cast<llama_token>(std::max_element(logits, logits + n_vocab) - logits);
        auto t0 = std::chrono::steady_clock::now();
        if (llama_decode(ctx, llama_batch_get_one(&best, 1)) != 0) return 0.0;
        ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    return (n_tokens - 1) * 1000.0 / ms;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: infer_bench MODEL [THREADS] [TOKENS] [REPEATS]\n");
        return 2;
    }
    const std::string path = argv[1];
    const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
    const int n_tokens = argc > 3 ? std::atoi(argv[3]) : 64;
    const int repeats = argc > 4 ? std::atoi(argv[4]) : 5;

    mlens::SessionOptions options;
    options.n_threads = threads;
    auto session = mlens::Session::load(path, options);
    if (!session) {
        std::fprintf(stderr, "%s\n", session.error().to_string().c_str());
        return 1;
    }
    mlens::Session& s = **session;
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = cp.n_batch = s.n_ctx();
    cp.n_ubatch = std::min<uint32_t>(s.n_ctx(), 512);
    cp.n_threads = cp.n_threads_batch = threads;
    cp.no_perf = false;
    llama_context* ctx = llama_init_from_model(s.model(), cp);
    if (!ctx) return 1;

    mlens::GenerateOptions g;
    g.max_tokens = n_tokens;
    g.stop_at_eog = false;
    std::vector<double> ours, own, bare, prompt_rate, capture_cost;
    for (int r = 0; r < repeats; ++r) {
        // Alternate which runs first so that neither always gets the warmer caches.
        if (r % 2 == 1) own.push_back(llama_own_loop(ctx, s.vocab(), n_tokens));
        auto result = mlens::generate(s, kPrompt, g);
        if (!result) return 1;
        ours.push_back(result->generation_tokens_per_s);
        prompt_rate.push_back(result->prompt_tokens_per_s);
        if (r % 2 == 0) own.push_back(llama_own_loop(ctx, s.vocab(), n_tokens));
        bare.push_back(bare_loop(ctx, s.vocab(), n_tokens));
        auto capture = mlens::capture_layers(s, kPrompt, {});
        if (!capture) return 1;
        capture_cost.push_back(capture->capture_ms / capture->plain_ms);
    }
    llama_free(ctx);
    const double a = median(ours), b = median(own), c = median(bare);
    std::printf("model %s, %d threads, %d tokens, %d repeats\n", path.c_str(), threads, n_tokens, repeats);
    std::printf("prompt: %.1f tokens/s through ModelLens\n", median(prompt_rate));
    std::printf("generation: ModelLens %.1f tokens/s, llama.cpp's own loop %.1f tokens/s, ratio %.3f\n", a, b, a / b);
    std::printf("generation: bare argmax loop (decode floor) %.1f tokens/s, ratio %.3f\n", c, a / c);
    std::printf("layer capture (default names): decode takes %.2fx the time without capture\n", median(capture_cost));
    return 0;
}
