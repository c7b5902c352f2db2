// What reaches this process from the llama.cpp worker is bounded: a frame larger than the wire
// allows, nested deeper, announcing more items than it has bytes, or a worker that goes silent
// (before or inside a frame) stops the worker with the reason, and this process carries on (a
// real worker loads and answers afterwards). The worker is tests/support/fake_llama_worker.cpp.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "build_paths.h"
#include "cli_runner.h"
#include "memory_watch.h"
#include "mlens/infer/worker_session.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

SessionOptions small_options(uint32_t timeout_s = 120) {
    SessionOptions o;
    o.n_threads = 1;
    o.n_ctx = 64;
    o.worker_timeout_s = timeout_s;
    return o;
}

// Loads the demo model through the fake worker in `mode`; returns the error the load ended with.
Error load_through_fake(const std::string& mode, uint32_t timeout_s = 120) {
    test::ScopedEnv worker("MLENS_LLAMA_WORKER", std::string(MLENS_FAKE_LLAMA_WORKER));
    test::ScopedEnv fake_mode("MLENS_FAKE_WORKER_MODE", mode);
    auto loaded = WorkerSession::load(demo("tiny-llama-f32.gguf"), small_options(timeout_s));
    REQUIRE_FALSE(loaded.ok());
    return loaded.error();
}

// A real worker still loads and tokenizes in this process.
void check_real_worker_runs() {
    auto real = WorkerSession::load(demo("tiny-llama-f32.gguf"), small_options());
    INFO((real ? std::string() : real.error().to_string()));
    REQUIRE(real.ok());
    auto tokens = (*real)->run<TokenizeOp>({"Hello", TokenizeOptions{}});
    REQUIRE(tokens.ok());
    CHECK_FALSE(tokens->empty());
}

double seconds_of(const std::function<void()>& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("a worker's frame beyond the wire's limits stops the worker, not this process", "[infer][worker][limits]") {
    Error deep = load_through_fake("deep");
    CHECK(deep.code == ErrorCode::E_LLAMA_STOPPED);
    CHECK(deep.message == "llama.cpp stopped: a frame nests deeper than 64 levels (killed)");

    Error oversized = load_through_fake("oversized");
    CHECK(oversized.code == ErrorCode::E_LLAMA_STOPPED);
    CHECK(oversized.message == "llama.cpp stopped: a frame announces 4294967295 bytes, more than the 536870912 a frame may have (killed)");

    Error many = load_through_fake("many");
    CHECK(many.code == ErrorCode::E_LLAMA_STOPPED);
    CHECK(many.message == "llama.cpp stopped: a frame announces 1099511627776 pairs in 2 bytes (killed)");

    check_real_worker_runs();
}

TEST_CASE("a worker that sends nothing for the timeout is killed and reported", "[infer][worker][limits]") {
    Error silent;
    const double took = seconds_of([&] { silent = load_through_fake("silent", 2); });
    CHECK(silent.code == ErrorCode::E_LLAMA_STOPPED);
    CHECK(silent.message == "llama.cpp stopped: the worker sent nothing for 2 s (killed)");
    CHECK(took >= 2.0);
    CHECK(took < 10.0);

    // A frame that announces 512 MiB and stops after 16 bytes: silence too, and nothing of the
    // announced size is allocated while waiting for it.
    Error partial;
    const uint64_t grew = test::peak_growth_bytes([&] { partial = load_through_fake("partial", 2); });
    CHECK(partial.message == "llama.cpp stopped: the worker sent nothing for 2 s (killed)");
    CHECK(grew < (64u << 20));

    check_real_worker_runs();
}

TEST_CASE("mlens inference commands take --worker-timeout and report a silent worker", "[infer][worker][limits][cli]") {
    test::ScopedEnv worker("MLENS_LLAMA_WORKER", std::string(MLENS_FAKE_LLAMA_WORKER));
    test::ScopedEnv fake_mode("MLENS_FAKE_WORKER_MODE", std::string("silent"));
    test::CliRun run = test::run_mlens({"run", demo("tiny-llama-f32.gguf"), "-p", "Hello", "--worker-timeout", "2"});
    CHECK(run.exit_status == 1);
    CHECK(run.err.find("llama.cpp stopped: the worker sent nothing for 2 s (killed)") != std::string::npos);

    test::ScopedEnv deep_mode("MLENS_FAKE_WORKER_MODE", std::string("deep"));
    test::CliRun deep = test::run_mlens({"memory", demo("tiny-llama-f32.gguf")});
    CHECK(deep.exit_status == 1);
    CHECK(deep.err.find("llama.cpp stopped: a frame nests deeper than 64 levels (killed)") != std::string::npos);

    for (const char* command : {"tokenize", "run", "ab", "layers", "kld", "memory", "layer-divergence"}) {
        INFO(command);
        test::CliRun help = test::run_mlens({command, "--help"});
        CHECK(help.out.find("--worker-timeout") != std::string::npos);
    }
    CHECK(test::run_mlens({"run", demo("tiny-llama-f32.gguf"), "-p", "Hello", "--worker-timeout", "1"}).exit_status == 2);
}
