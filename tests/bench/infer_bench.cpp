// infer_bench MODEL [TOKENS] [REPEATS]
//
// Generation speed through ModelLens — llama.cpp in its worker process (worker_session.h),
// greedy, top-5 candidates per step, streamed to this process — against llama.cpp's own
// generation loop in this process: the loop of llama.cpp's `simple` example (a greedy sampler
// chain, llama_sampler_sample, the token's piece, llama_decode). Both are timed the same way, by
// the wall clock as the caller sees it, from asking for the tokens (the prompt already tokenized)
// to having them all — for ModelLens the request to the worker, the prompt's decode, every step
// and the answer back; for the loop the prompt's decode and its iterations — divided by the
// tokens generated. Also a bare loop (argmax, nothing else per step) as the decode floor, and the
// cost of layer capture.
//
// Two conditions, each figure the median over REPEATS runs:
//  - idle: ModelLens's default thread count (threads.h) and llama.cpp's loop at the same count,
//    measured in two phases so that only one model is loaded at a time: first the worker alone,
//    then (the worker gone) the same ModelLens code in this process and llama.cpp's loop,
//    alternating. The cores other processes kept busy are sampled before and after; above
//    kIdleBusyLimit the idle figures are labelled as taken on a busy machine, since two
//    decoding threads slow down many times over when a core is shared (threads.h).
//  - busy: one process per online core spinning the whole time; ModelLens's default (measured
//    again under that load), ModelLens with 1 thread, and llama.cpp's loop with its own default
//    thread count (what `simple` uses) and with one thread per core (those two collapse, so they
//    run once, over kCollapsedTokens tokens).
#include <llama.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mlens/infer/generate.h"
#include "mlens/infer/layer_capture.h"
#include "mlens/infer/threads.h"
#include "mlens/infer/worker_session.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCollapsedTokens = 8;
constexpr double kIdleBusyLimit = 0.2;  // cores kept busy by others
constexpr int kIdleSampleMs = 500;

const char* const kPrompt = "Once upon a time, in a small village by the sea, there lived";

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Tokenizes the prompt and decodes it; returns false on failure.
bool start(llama_context* ctx, const llama_vocab* vocab) {
    llama_memory_clear(llama_get_memory(ctx), true);
    std::vector<llama_token> tokens(256);
    int32_t n =
        llama_tokenize(vocab, kPrompt, static_cast<int32_t>(std::char_traits<char>::length(kPrompt)), tokens.data(), 256, true, true);
    tokens.resize(static_cast<size_t>(n));
    return llama_decode(ctx, llama_batch_get_one(tokens.data(), n)) == 0;
}

struct Rates {
    double wall = 0.0;  // tokens / wall-clock seconds, prompt included
    double decode = 0.0;  // tokens / seconds inside llama_decode (llama.cpp's counters, or ModelLens's)
};

// llama.cpp's own loop, as its `simple` example writes it.
Rates llama_own_loop(llama_context* ctx, const llama_vocab* vocab, int n_tokens) {
    llama_perf_context_reset(ctx);
    auto t0 = Clock::now();
    if (!start(ctx, vocab)) return {};
    llama_sampler* sampler = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(sampler, llama_sampler_init_greedy());
    char piece[256];
    for (int i = 0; i + 1 < n_tokens; ++i) {
        llama_token next = llama_sampler_sample(sampler, ctx, -1);
        volatile int32_t length = llama_token_to_piece(vocab, next, piece, sizeof piece, 0, true);
        (void)length;
        if (llama_decode(ctx, llama_batch_get_one(&next, 1)) != 0) break;
    }
    const double s = seconds_since(t0);
    llama_sampler_free(sampler);
    const llama_perf_context_data perf = llama_perf_context(ctx);
    // The prompt's decode is counted apart (t_p_eval), as ModelLens counts it apart.
    return {n_tokens / s, perf.n_eval > 0 && perf.t_eval_ms > 0 ? perf.n_eval * 1000.0 / perf.t_eval_ms : 0.0};
}

// The least a loop can do: argmax of the logits, then decode.
double bare_loop(llama_context* ctx, const llama_vocab* vocab, int n_tokens) {
    auto t0 = Clock::now();
    if (!start(ctx, vocab)) return 0.0;
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    for (int i = 0; i + 1 < n_tokens; ++i) {
        const float* logits = llama_get_logits_ith(ctx, -1);
        llama_token best = static_cast<llama_token>(std::max_element(logits, logits + n_vocab) - logits);
        if (llama_decode(ctx, llama_batch_get_one(&best, 1)) != 0) return 0.0;
    }
    return n_tokens / seconds_since(t0);
}

mlens::GenerateOptions generate_options(int n_tokens) {
    mlens::GenerateOptions g;
    g.max_tokens = n_tokens;
    g.stop_at_eog = false;
    return g;
}

Rates checked(const mlens::Result<mlens::GenerationResult>& result, size_t steps, int n_tokens, double seconds) {
    if (!result || steps != static_cast<size_t>(n_tokens)) {
        std::fprintf(stderr, "%s\n", result ? "too few steps" : result.error().to_string().c_str());
        std::exit(1);
    }
    return {n_tokens / seconds, result->generation_tokens_per_s};
}

// ModelLens through its worker, steps streamed to this process.
Rates through_worker(mlens::WorkerSession& worker, int n_tokens) {
    const mlens::GenerateOptions g = generate_options(n_tokens);
    size_t steps = 0;
    auto t0 = Clock::now();
    auto result =
        worker.run<mlens::GenerateOp>({kPrompt, g}, nullptr, [&](const mlens::GenerationStream& batch) { steps += batch.steps.size(); });
    if (!result) return checked(mlens::Result<mlens::GenerationResult>(result.error()), steps, n_tokens, seconds_since(t0));
    return checked(mlens::Result<mlens::GenerationResult>(std::move(result->result)), steps, n_tokens, seconds_since(t0));
}

// The same code in this process, for the cost of the worker itself.
Rates in_process(mlens::Session& session, int n_tokens) {
    const mlens::GenerateOptions g = generate_options(n_tokens);
    auto ids = mlens::tokenize_ids(session, kPrompt, g.tokenize);
    if (!ids) std::exit(1);
    size_t steps = 0;
    auto t0 = Clock::now();
    auto result = mlens::generate_from_tokens(session, *ids, g, nullptr, [&](const mlens::GenerationStep&) { ++steps; });
    return checked(result, steps, n_tokens, seconds_since(t0));
}

double median_of(const std::vector<Rates>& runs, double Rates::*field) {
    std::vector<double> v;
    for (const Rates& r : runs) v.push_back(r.*field);
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

std::unique_ptr<mlens::WorkerSession> load_worker(const std::string& path, int threads) {
    mlens::SessionOptions options;
    options.n_threads = threads;
    auto worker = mlens::WorkerSession::load(path, options);
    if (!worker) {
        std::fprintf(stderr, "%s\n", worker.error().to_string().c_str());
        std::exit(1);
    }
    return std::move(worker).value();
}

llama_context* make_context(mlens::Session& s, int threads) {
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = cp.n_batch = s.n_ctx();
    cp.n_ubatch = std::min<uint32_t>(s.n_ctx(), 512);
    if (threads > 0) cp.n_threads = cp.n_threads_batch = threads;
    cp.no_perf = false;
    llama_context* ctx = llama_init_from_model(s.model(), cp);
    if (!ctx) std::exit(1);
    return ctx;
}

// One process per core, each spinning until killed (and dying with this one).
std::vector<pid_t> start_spinners(int n) {
    std::vector<pid_t> pids;
    for (int i = 0; i < n; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            volatile unsigned long spins = 0;
            while (true) spins = spins + 1;
        }
        if (pid > 0) pids.push_back(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return pids;
}

void stop_spinners(const std::vector<pid_t>& pids) {
    for (pid_t pid : pids) kill(pid, SIGKILL);
    for (pid_t pid : pids) waitpid(pid, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: infer_bench MODEL [TOKENS] [REPEATS]\n");
        return 2;
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
    const std::string path = argv[1];
    const int n_tokens = argc > 2 ? std::atoi(argv[2]) : 64;
    const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
    const int cores = mlens::online_cores();

    const std::optional<double> busy_before = mlens::busy_cores(kIdleSampleMs);

    // Idle, phase 1: the worker alone.
    auto worker = load_worker(path, 0);
    const int threads = worker->threads();
    const std::string idle_note = worker->thread_note();
    std::vector<Rates> ours;
    for (int r = 0; r < repeats; ++r) ours.push_back(through_worker(*worker, n_tokens));
    worker.reset();

    // Idle, phase 2: this process alone, ModelLens's code and llama.cpp's loop alternating.
    mlens::SessionOptions options;
    options.n_threads = threads;
    auto session = mlens::Session::load(path, options);
    if (!session) {
        std::fprintf(stderr, "%s\n", session.error().to_string().c_str());
        return 1;
    }
    mlens::Session& s = **session;
    llama_context* ctx = make_context(s, threads);
    std::vector<Rates> local, own;
    std::vector<double> bare, capture_cost;
    for (int r = 0; r < repeats; ++r) {
        // Alternate which runs first so that neither always gets the warmer caches.
        if (r % 2 == 1) own.push_back(llama_own_loop(ctx, s.vocab(), n_tokens));
        local.push_back(in_process(s, n_tokens));
        if (r % 2 == 0) own.push_back(llama_own_loop(ctx, s.vocab(), n_tokens));
        bare.push_back(bare_loop(ctx, s.vocab(), n_tokens));
        auto capture = mlens::capture_layers(s, kPrompt, {});
        if (!capture) return 1;
        capture_cost.push_back(capture->capture_ms / capture->plain_ms);
    }
    llama_free(ctx);
    const std::optional<double> busy_after = mlens::busy_cores(kIdleSampleMs);
    const double others = std::max(busy_before.value_or(0.0), busy_after.value_or(0.0));
    const bool idle = busy_before && busy_after && others <= kIdleBusyLimit;
    const char* label = idle ? "idle" : "idle (NOT IDLE: see above)";
    const double dec_a = median_of(ours, &Rates::decode), dec_b = median_of(own, &Rates::decode);
    const double a = median_of(ours, &Rates::wall), l = median_of(local, &Rates::wall), b = median_of(own, &Rates::wall);
    const double c = median(bare);
    std::printf("model %s, %d tokens, %d repeats, %d online cores\n", path.c_str(), n_tokens, repeats, cores);
    std::printf("idle check: other processes kept %.2f cores busy before the idle phases and %.2f after (limit %.2f)%s\n",
                busy_before.value_or(-1.0), busy_after.value_or(-1.0), kIdleBusyLimit,
                idle ? "" : ": the machine was not idle, so the idle figures below do not measure ModelLens");
    std::printf("%s: ModelLens default %s\n", label, idle_note.c_str());
    std::printf(
        "%s: decode speed (time inside llama_decode): ModelLens (worker process) %.1f tokens/s, llama.cpp's own "
        "loop %.1f tokens/s (its counters, same threads), ratio %.3f\n",
        label, dec_a, dec_b, dec_a / dec_b);
    std::printf(
        "%s: wall clock, prompt included: ModelLens (worker process) %.1f tokens/s, the same in process %.1f, "
        "llama.cpp's own loop %.1f; worker / in process %.3f, ModelLens / llama.cpp %.3f\n",
        label, a, l, b, a / l, a / b);
    std::printf("%s: bare argmax loop (decode floor) %.1f tokens/s, wall-clock ratio %.3f\n", label, c, a / c);
    std::printf("layer capture (default names): decode takes %.2fx the time without capture\n", median(capture_cost));

    // Under load: every core already busy with another process.
    std::vector<pid_t> spinners = start_spinners(cores);
    auto busy_default = load_worker(path, 0);
    auto busy_one = load_worker(path, 1);
    const int llama_default_threads = llama_context_default_params().n_threads;
    llama_context* ctx_llama_default = make_context(s, 0);
    llama_context* ctx_all_cores = make_context(s, cores);
    std::vector<Rates> b_default, b_one;
    for (int r = 0; r < repeats; ++r) {
        b_default.push_back(through_worker(*busy_default, n_tokens));
        b_one.push_back(through_worker(*busy_one, n_tokens));
    }
    // With more threads than idle cores llama.cpp's loop runs at a few tokens per second: one
    // short run each keeps the benchmark within a minute.
    const int collapsed_tokens = std::min(n_tokens, kCollapsedTokens);
    const double od = llama_own_loop(ctx_llama_default, s.vocab(), collapsed_tokens).wall;
    const double oc = llama_own_loop(ctx_all_cores, s.vocab(), collapsed_tokens).wall;
    stop_spinners(spinners);
    llama_free(ctx_llama_default);
    llama_free(ctx_all_cores);
    const double d = median_of(b_default, &Rates::wall), one = median_of(b_one, &Rates::wall);
    std::printf(
        "busy (%d spinning processes), wall clock: ModelLens default (%s) %.1f tokens/s, ModelLens --threads 1 "
        "%.1f tokens/s\n",
        cores, busy_default->thread_note().c_str(), d, one);
    std::printf(
        "busy: llama.cpp's own loop %.1f tokens/s at its default %d threads, %.1f tokens/s at %d threads "
        "(%d tokens, one run each)\n",
        od, llama_default_threads, oc, cores, collapsed_tokens);
    std::printf("busy: ModelLens default / --threads 1 %.3f%s, / llama.cpp's own loop %.3f (its default), %.3f (%d threads)\n", d / one,
                busy_default->threads() == 1 ? " (the default chose 1 thread: the same configuration, so the ratio is noise)" : "", d / od,
                d / oc, cores);
    return 0;
}
