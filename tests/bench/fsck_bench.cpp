// fsck_bench [N_ROWS] [THREADS] [TYPES]
//
// TYPES: a comma-separated list of ggml type names to measure (default: all six below).
// Speed of `mlens fsck` (fsck_model on THREADS threads, default 2) on one-tensor GGUF files of
// F16, BF16, F32, Q4_K, Q8_0 and IQ4_XS ([4096, N_ROWS], default 4096 rows), read from the page
// cache, against:
//   memcpy     one thread copying a 64 MiB buffer: this machine's memory bandwidth, counted as
//              the bytes copied per second
//   to_float   one thread reading the tensor from the file in 1M-value chunks and running ggml's
//              to_float on each (F32: a copy), the decode a quantized scan cannot avoid
//   validate   ggml_validate_row_data over the same chunks on one thread, as llama.cpp's
//              --check-tensors calls it per tensor
// Each runs in turn, seven rounds; prints the best wall-clock (and CPU) time of each and the ratios: fsck bytes/s against
// memcpy (F16/BF16/F32 must reach 0.5), fsck values/s against to_float (quantized types must
// reach 1), and fsck time against validate.
#include <ggml.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mlens/analysis/fsck.h"
#include "mlens/formats/gguf_reader.h"
#include "model_fixture.h"
#include "raw_gguf.h"
#include "test_paths.h"

using namespace mlens;

namespace {

using Clock = std::chrono::steady_clock;

double cpu_now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
    double wall = 1e300, cpu = 1e300;  // best of the rounds, each
};

std::vector<Timing> best_s(const std::vector<std::function<void()>>& fns, int rounds = 7) {
    std::vector<Timing> best(fns.size());
    for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < fns.size(); ++i) {
            auto t0 = Clock::now();
            const double c0 = cpu_now();
            fns[i]();
            best[i].cpu = std::min(best[i].cpu, cpu_now() - c0);
            best[i].wall = std::min(best[i].wall, std::chrono::duration<double>(Clock::now() - t0).count());
        }
    return best;
}

double memcpy_bandwidth() {
    const size_t n = 64u << 20;
    std::vector<uint8_t> a(n, 1), b(n, 2);
    auto t = best_s({[&] { std::memcpy(b.data(), a.data(), n); }});
    if (b[n / 2] != 1) std::abort();
    return static_cast<double>(n) / t[0].wall;
}

std::vector<uint8_t> stored(ggml_type type, const std::vector<float>& values, int64_t row) {
    std::vector<uint8_t> out(ggml_row_size(type, row) * (values.size() / row));
    ggml_quantize_chunk(type, values.data(), out.data(), 0, static_cast<int64_t>(values.size()) / row, row, nullptr);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const uint64_t rows = argc > 1 ? std::stoull(argv[1]) : 4096;
    const unsigned threads = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 2;
    const int64_t row = 4096;
    test::TempDir dir;
    const std::vector<float> values = test::test_signal(row * rows, 3);
    const double copy = memcpy_bandwidth();
    std::printf("memcpy (one thread, 64 MiB): %.2f GB/s\n", copy / 1e9);
    std::printf("%-7s %7s %10s %9s %14s %7s %10s %14s %11s\n", "type", "MB", "fsck GB/s", "x memcpy", "to_float Gv/s", "x to_f",
                "x to_f cpu", "validate GB/s", "x validate");
    const std::string only = argc > 3 ? "," + std::string(argv[3]) + "," : "";
    for (ggml_type type : {GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_F32, GGML_TYPE_Q4_K, GGML_TYPE_Q8_0, GGML_TYPE_IQ4_XS}) {
        const std::string name = ggml_type_name(type);
        if (!only.empty() && only.find("," + name + ",") == std::string::npos) continue;
        const std::string path = dir.file(name + ".gguf");
        std::vector<uint8_t> bytes = type == GGML_TYPE_F32 ? std::vector<uint8_t>(values.size() * 4) : stored(type, values, row);
        if (type == GGML_TYPE_F32) std::memcpy(bytes.data(), values.data(), bytes.size());
        if (!test::write_raw_gguf(path, {{"w", static_cast<uint32_t>(type), {static_cast<uint64_t>(row), rows}, bytes}}).ok()) return 1;
        bytes.clear();
        bytes.shrink_to_fit();
        auto model = open_gguf(path);
        if (!model) return 1;
        const TensorInfo& t = model->tensors[0];
        const uint64_t n_bytes = *t.n_bytes, chunk_rows = std::max<uint64_t>(1, (1u << 20) / row);
        const uint64_t chunk_bytes = ggml_row_size(type, row) * chunk_rows;
        std::vector<uint8_t> chunk(chunk_bytes);
        std::vector<float> out(static_cast<size_t>(row * chunk_rows));
        const auto* traits = ggml_get_type_traits(type);
        bool valid = true;
        size_t findings = 0;
        auto each_chunk = [&](const std::function<void(uint64_t n)>& fn) {
            for (uint64_t at = 0; at < n_bytes; at += chunk_bytes) {
                const uint64_t n = std::min(chunk_bytes, n_bytes - at);
                if (!model->read_tensor_bytes(0, at, n, chunk.data())) std::abort();
                fn(n);
            }
        };
        auto times = best_s({
            [&] {
                auto r = fsck_model(*model, nullptr, threads);
                findings = r ? r->findings.size() : 1;
            },
            [&] {
                each_chunk([&](uint64_t n) {
                    // F32 has no to_float: its decode is a copy.
                    if (traits->to_float)
                        traits->to_float(chunk.data(), out.data(), static_cast<int64_t>(n / ggml_row_size(type, row) * row));
                    else
                        std::memcpy(out.data(), chunk.data(), n);
                });
            },
            [&] { each_chunk([&](uint64_t n) { valid &= ggml_validate_row_data(type, chunk.data(), n); }); },
        });
        if (findings != 0 || !valid) {
            std::fprintf(stderr, "%s: %zu findings, valid %d: the benchmark tensor must be clean\n", name.c_str(), findings, valid);
            return 1;
        }
        const double n_values = static_cast<double>(row) * static_cast<double>(rows);
        const double fsck_bps = static_cast<double>(n_bytes) / times[0].wall;
        std::printf("%-7s %7.1f %10.2f %9.2f %14.3f %7.2f %10.2f %14.2f %11.2f\n", name.c_str(), n_bytes / 1e6, fsck_bps / 1e9,
                    fsck_bps / copy, n_values / times[1].wall / 1e9, times[1].wall / times[0].wall, times[1].cpu / times[0].cpu,
                    n_bytes / times[2].wall / 1e9, times[2].wall / times[0].wall);
    }
    std::printf(
        "fsck on %u threads; x memcpy: fsck bytes/s over one-thread memcpy bytes/s; x to_f: fsck values/s over "
        "one-thread ggml to_float (wall clock); x to_f cpu: the same in CPU time of all threads (the work done, "
        "whatever else runs on the machine); x validate: ggml_validate_row_data time over fsck time\n",
        threads);
    return 0;
}
