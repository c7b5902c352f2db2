// gguf_parse_bench [VOCAB_GGUF]
//
// Times a full GGUF header parse with ModelLens's reader and with ggml's gguf_init_from_file
// (no_alloc) in the same run, on (1) an upstream vocab GGUF (default: the pinned llama.cpp's
// models/ggml-vocab-gemma-4.gguf, 262k tokens) and (2) a generated header of 1,000,000 tokens and
// 10,000 tensors. Prints the best of several runs for each, the ratio, and the peak memory each
// parser added (measured in a forked child, against an idle child's baseline), and the machine's
// 1-minute load average when the timing ended (other work on the 2 cores slows both parsers).
// Beside the wall-clock times it prints the least process CPU time of a run (user + system), which
// other work on the machine disturbs less, and its ratio.
#include <gguf.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "build_paths.h"
#include "large_gguf.h"
#include "mlens/formats/gguf_reader.h"

namespace {

using Clock = std::chrono::steady_clock;

double cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

struct Times {
    double wall = 1e300;  // least of the runs, ms
    double cpu = 1e300;
};

Times best_ms(const std::function<void()>& fn, int runs) {
    Times best;
    for (int i = 0; i < runs; ++i) {
        const double c0 = cpu_ms();
        auto t0 = Clock::now();
        fn();
        best.wall = std::min(best.wall, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        best.cpu = std::min(best.cpu, cpu_ms() - c0);
    }
    return best;
}

// Peak resident memory (KiB) of a child process that runs fn once.
long child_peak_kib(const std::function<void()>& fn) {
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int status = 0;
    struct rusage usage {};
    wait4(pid, &status, 0, &usage);
    return usage.ru_maxrss;
}

void parse_ours(const std::string& path) {
    auto model = mlens::open_gguf(path);
    if (!model || model->error_count()) std::fprintf(stderr, "ours: parse failed\n");
}

void parse_ggml(const std::string& path) {
    gguf_init_params params{true, nullptr};
    gguf_context* ctx = gguf_init_from_file(path.c_str(), params);
    if (!ctx)
        std::fprintf(stderr, "ggml: parse failed\n");
    else
        gguf_free(ctx);
}

std::string write_big_header() {
    std::string path = "/tmp/mlens-bench-1m-tokens.gguf";
    if (!mlens::test::write_large_gguf(path, {.tokens = 1000000, .tensors = 10000}))
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return path;
}

void bench(const char* label, const std::string& path) {
    parse_ours(path);  // warm the page cache for both
    parse_ggml(path);
    const Times ours = best_ms([&] { parse_ours(path); }, 7);
    const Times ggml = best_ms([&] { parse_ggml(path); }, 7);
    long idle = child_peak_kib([] {});
    long ours_kib = child_peak_kib([&] { parse_ours(path); }) - idle;
    long ggml_kib = child_peak_kib([&] { parse_ggml(path); }) - idle;
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    double file_mib = static_cast<double>(f.tellg()) / (1 << 20);
    double load = 0;
    getloadavg(&load, 1);
    std::printf("%-28s file %7.1f MiB | mlens %8.2f ms  ggml %8.2f ms  ratio %5.1fx | peak +%6.1f MiB (ggml +%6.1f MiB) | load %.2f\n",
                label, file_mib, ours.wall, ggml.wall, ggml.wall / ours.wall, ours_kib / 1024.0, ggml_kib / 1024.0, load);
    std::printf("%-28s      CPU time | mlens %8.2f ms  ggml %8.2f ms  ratio %5.1fx\n", "", ours.cpu, ggml.cpu, ggml.cpu / ours.cpu);
}

}  // namespace

int main(int argc, char** argv) {
    std::string vocab = argc > 1 ? argv[1] : std::string(MLENS_LLAMA_SOURCE) + "/models/ggml-vocab-gemma-4.gguf";
    bench("gemma-4 vocab (262k tokens)", vocab);
    std::string big = write_big_header();
    bench("1M tokens + 10k tensors", big);
    std::remove(big.c_str());
    return 0;
}
