// decode_bench [N_VALUES] [THREADS] [--keep PATH] [--only TYPE] [--cpu] [--gaussian]
//
// N_VALUES (default 16Mi) must be a multiple of the 4,096-value row; the process exits 1 when a
// check of the results fails (a decoded NaN, a histogram or count that misses a value).
//
// Dequantization throughput of ModelLens against single-threaded ggml to_float on the same bytes
// in the same run, for Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q4_K, Q5_K, IQ4_XS, Q6_K, Q8_0, BF16 and
// F16 GGUF tensors and Ollama/MLX int4 and int8 tensor blobs. ggml has no MLX type: an MLX blob's
// reference is ggml's to_float of the ggml type of the same layout, over the same values (Q4_1,
// a scale and an offset per group of 4-bit codes, for int4; Q8_0, a scale per group of 8-bit
// codes, for int8), with our own single-threaded decode of the blob printed beside it. For each:
//   ggml      one thread, to_float over the tensor in 1M-value chunks (read from the file), each
//             chunk's output reused while it is still in cache: the strict reference
//   ggml whole one thread, the tensor read from the file and to_float over all of it into one
//             tensor-sized buffer, as a program that dequantizes a tensor calls it (the buffers
//             are allocated once, before timing)
//   decode    TensorView::read over the same chunks on THREADS threads (default 2)
//   analyze   compute_stats_and_histogram(256 bins) on THREADS threads; after the type, the route
//             the statistics took (stats.h, StatsRoute): "code groups" counts each group's codes
//             and decodes nothing, "scaled groups" bins each code times its group's step, "step
//             tables" counts each code once per distinct step over the whole tensor and bins each
//             step's codes once (scaled groups whose steps repeat: Q8_0), "offset groups" bins
//             each code times its group's step plus its offset, "stored codes" counts each
//             stored code (F16, BF16), "decoded" decodes
//   by values for a tensor whose statistics went through its groups (code groups, step tables,
//             scaled or offset groups), the same statistics taken from decoded values (the view
//             without its groups), as they were before those routes
// They run in turn, fifteen rounds; prints the best of each in G values/s and the ratios of decode
// and analyze to each reference, then a "statistics" line: analyze against "ggml whole" (for MLX,
// ggml whole of the same-layout type, then our single-threaded decode) on both clocks of the same
// rounds, on THREADS threads by the wall clock and per core by CPU time. For a route that bins
// or counts every value (every route but code groups), a "floor" line: the statistics' counting alone, one
// increment per value into their 4,096 fine bins (timed on one core, the bins found beforehand),
// and the most that counting alone would let such a route reach against ggml whole on THREADS
// threads.
// Then a comparison of the F16 tensor with the Q4_K one (compare_sources with 256-value blocks,
// THREADS threads) against ggml decoding both on one thread: the least any comparison must do.
// --keep PATH keeps the benchmarked GGUF (one tensor per type, named by the type) at PATH and
// writes the measured throughputs to PATH.tsv (tensor, ggml G/s, decode G/s), for comparing
// other decoders on the same file. --only TYPE (a ggml type name, e.g. q4_K, or mlx_int4 or
// mlx_int8) benchmarks that type alone, without the comparison and the other tensors: a short
// run to profile. --cpu times the main columns by the CPU time of the whole process (every
// thread's) instead of the wall clock: on a machine that other work keeps busy, a run then still
// measures how much work each route does (its ratios are per core: a route on THREADS threads
// would take 1/THREADS of its CPU time on idle cores). The values are a sum of sines
// (test_signal), whose blocks take few distinct scales (778 Q8_0 steps in 16M values);
// --gaussian takes weights like a model's instead, Gaussian with a scale per 4,096-value row
// between 0.01 and 0.03 and one value in 5,000 twenty times further out, whose scales rarely
// repeat: routes that count per distinct scale show there what real weights give them.
#include <ggml.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "mlens/analysis/tensor_compare.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/quant/mlx_quant.h"
#include "mlens/quant/stats.h"
#include "mlens/quant/tensor_view.h"
#include "mlens/util/parallel.h"
#include "model_fixture.h"
#include "test_paths.h"

using namespace mlens;

namespace {

bool g_cpu_time = false;  // --cpu

double wall_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Seconds of the process's CPU time (every thread's).
double cpu_s() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A function's best wall-clock and best CPU time over the rounds, each the least of its own clock.
struct Timing {
    double wall = 1e300, cpu = 1e300;
    // The clock the main columns use: CPU time with --cpu, else the wall clock.
    double chosen() const { return g_cpu_time ? cpu : wall; }
};

// Best times of several functions over `rounds` rounds, each round running every function once
// in turn, so that a change in the machine's speed during the run affects all of them alike.
std::vector<Timing> best_s(const std::vector<std::function<void()>>& fns, int rounds = 15) {
    std::vector<Timing> best(fns.size());
    for (int r = 0; r < rounds; ++r)
        for (size_t i = 0; i < fns.size(); ++i) {
            const double w0 = wall_s(), c0 = cpu_s();
            fns[i]();
            const double c1 = cpu_s(), w1 = wall_s();
            best[i].wall = std::min(best[i].wall, w1 - w0);
            best[i].cpu = std::min(best[i].cpu, c1 - c0);
        }
    return best;
}

std::atomic<uint64_t> sink{0};  // keeps decoded values observable

void decode_parallel(const TensorView& v, unsigned threads) {
    const uint64_t chunk = v.chunk_length();
    const uint64_t n = (v.size() + chunk - 1) / chunk;
    parallel_for(n, threads, [&](uint64_t c) {
        thread_local std::vector<float> buf;
        const uint64_t first = c * chunk, count = std::min(chunk, v.size() - first);
        buf.resize(count);
        if (!v.read(first, count, buf.data())) return false;
        sink += buf[count / 2] == buf[count / 2] ? 0 : 1;
        return true;
    });
}

// The reference: ggml's to_float over the view on one thread, in the view's chunks, each read
// from the file first.
void ggml_decode(const TensorView& v) {
    const auto* traits = ggml_get_type_traits(static_cast<ggml_type>(v.info().type.id));
    const uint64_t chunk = v.chunk_length(), n = v.size();
    thread_local std::vector<uint8_t> bytes;
    thread_local std::vector<float> out;
    bytes.resize(chunk / v.block_length() * v.block_bytes());
    out.resize(chunk);
    for (uint64_t first = 0; first < n; first += chunk) {
        const uint64_t count = std::min(chunk, n - first);
        (void)v.read_blocks(first / v.block_length(), count / v.block_length(), bytes.data());
        traits->to_float(bytes.data(), out.data(), static_cast<int64_t>(count));
    }
    sink += out[0] == out[0] ? 0 : 1;
}

// The reference as a tool calls it: the whole tensor read, then decoded into one buffer.
void ggml_decode_whole(const TensorView& v, std::vector<uint8_t>& bytes, std::vector<float>& out) {
    const auto* traits = ggml_get_type_traits(static_cast<ggml_type>(v.info().type.id));
    const uint64_t n = v.size(), blocks = n / v.block_length();
    bytes.resize(blocks * v.block_bytes());
    out.resize(n);
    (void)v.read_blocks(0, blocks, bytes.data());
    traits->to_float(bytes.data(), out.data(), static_cast<int64_t>(n));
    sink += out[n / 2] == out[n / 2] ? 0 : 1;
}

// A view without its code, scaled and offset groups: statistics decode its values.
class WithoutCodeGroups final : public FloatSource {
public:
    explicit WithoutCodeGroups(const TensorView& view) : m_view(view) {}
    uint64_t size() const override { return m_view.size(); }
    uint64_t granularity() const override { return m_view.granularity(); }
    Status read(uint64_t first, uint64_t count, float* out) const override { return m_view.read(first, count, out); }
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override {
        return m_view.quick_range(first, count);
    }

private:
    const TensorView& m_view;
};

// The route the statistics take over a source (stats.h), from one untimed run; a failed run ends
// the benchmark.
StatsRoute route_of(const FloatSource& v, unsigned threads) {
    auto r = compute_stats_and_histogram(v, 256, nullptr, threads);
    if (!r) {
        std::fprintf(stderr, "statistics failed: %s\n", r.error().message.c_str());
        std::exit(1);
    }
    return r->route;
}

// Routes that reach values through groups, which the "by values" line compares with decoding.
bool through_groups(StatsRoute route) { return route != StatsRoute::decoded && route != StatsRoute::stored_codes; }

// Times in seconds; t_whole <= 0 when there is no whole-tensor reference, t_values <= 0 when
// statistics did not go through groups.
void report(const char* name, StatsRoute route, uint64_t n, double t_ref, double t_whole, double t_decode, double t_analyze,
            double t_values) {
    auto gps = [n](double t) { return static_cast<double>(n) / t / 1e9; };
    std::printf("%-8s %-13s ref %6.3f G/s", name, stats_route_name(route), gps(t_ref));
    if (t_whole > 0) std::printf(" (whole tensor %6.3f)", gps(t_whole));
    std::printf("   decode %6.3f G/s (%.2fx", gps(t_decode), t_ref / t_decode);
    if (t_whole > 0) std::printf(", %.2fx whole", t_whole / t_decode);
    std::printf(")   decode+stats+hist %6.3f G/s (%.2fx", gps(t_analyze), t_ref / t_analyze);
    if (t_whole > 0) std::printf(", %.2fx whole", t_whole / t_analyze);
    std::printf(")");
    if (t_values > 0) std::printf("   by values %6.3f G/s (%.2fx)", gps(t_values), t_ref / t_values);
    std::printf("\n");
}

// The statistics (decode + statistics + 256-bin histogram) against a single-threaded reference
// decode over the whole tensor (ggml to_float, or another decode named by `reference`), on both clocks: at THREADS
// threads on the wall clock, and per core by CPU time (the work done, whatever else loads the
// machine).
void report_statistics(uint64_t n, unsigned threads, const Timing& whole, const Timing& analyzed, const char* reference = "ggml whole") {
    auto gps = [n](double t) { return static_cast<double>(n) / t / 1e9; };
    std::printf(
        "         statistics: %u threads %6.3f G/s wall (%.2fx %s %6.3f)   "
        "per core %6.3f G/s CPU (%.2fx %s %6.3f)\n",
        threads, gps(analyzed.wall), whole.wall / analyzed.wall, reference, gps(whole.wall), gps(analyzed.cpu), whole.cpu / analyzed.cpu,
        reference, gps(whole.cpu));
}

// The fine bins (4,096 over [min, max]: the statistics' percentile bins) of every decoded value,
// as counter indices 1..4096, computed once before timing.
std::vector<uint16_t> fine_slots(const std::vector<float>& values) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const double low = *lo, scale = *hi > *lo ? 4096.0 / (static_cast<double>(*hi) - low) : 0.0;
    std::vector<uint16_t> slots(values.size());
    for (size_t i = 0; i < values.size(); ++i)
        slots[i] = static_cast<uint16_t>(1 + std::min(4095.0, std::floor((static_cast<double>(values[i]) - low) * scale)));
    return slots;
}

// What counting alone costs: one counter increment per value into the statistics' four
// interleaved copies of 16-bit counters (slot_copies.h), added up before they could overflow,
// written out as the AVX-512 tallies increment them (SlotCopies::reserve, then inline
// increments); SlotCopies::add, the plain loops' route, runs slower. A pass that bins every value
// (scaled groups, offset groups, decoded) does at least this; step tables make as many
// increments, into 256 counters a step, and stored codes one into a counter a code.
void count_slots_only(const std::vector<uint16_t>& slots) {
    constexpr size_t kSlots = 4098, kFlushAfter = 4 * 60000;
    std::vector<uint16_t> copies(4 * kSlots, 0);
    std::vector<uint32_t> total(kSlots, 0);
    uint16_t* c[4] = {copies.data(), copies.data() + kSlots, copies.data() + 2 * kSlots, copies.data() + 3 * kSlots};
    for (size_t at = 0; at < slots.size(); at += kFlushAfter) {
        const size_t end = std::min(slots.size(), at + kFlushAfter);
        size_t i = at;
        for (; i + 4 <= end; i += 4) {
            ++c[0][slots[i]];
            ++c[1][slots[i + 1]];
            ++c[2][slots[i + 2]];
            ++c[3][slots[i + 3]];
        }
        for (; i < end; ++i) ++c[0][slots[i]];
        for (size_t k = 0; k < kSlots; ++k) total[k] += c[0][k] + c[1][k] + c[2][k] + c[3][k];
        std::fill(copies.begin(), copies.end(), 0);
    }
    const uint64_t counted = std::accumulate(total.begin(), total.end(), uint64_t{0});
    sink += counted == slots.size() ? 0 : 1;  // every value counted once
}

// The counting floor against the reference: the G values/s one core counts at, and the ratio to
// ggml whole that counting alone would reach on THREADS threads.
void report_floor(uint64_t n, unsigned threads, const Timing& whole, const Timing& counting) {
    std::printf("         floor: counting alone (one increment per value, one core) %6.3f G/s CPU: at most %.2fx ggml whole on %u threads\n",
                static_cast<double>(n) / counting.cpu / 1e9, whole.cpu * threads / counting.cpu, threads);
}

// n weights in rows of `row`: Gaussian, each row with its own scale in [0.01, 0.03), one value
// in 5,000 twenty times further out (--gaussian).
std::vector<float> gaussian_weights(uint64_t n, uint64_t row) {
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> w(n);
    float scale = 0;
    for (uint64_t i = 0; i < n; ++i) {
        if (i % row == 0) scale = 0.02f * (0.5f + static_cast<float>(rng() % 1000) / 1000.0f);
        w[i] = normal(rng) * scale * (rng() % 5000 == 0 ? 20.0f : 1.0f);
    }
    return w;
}

void analyze(const FloatSource& v, unsigned threads) {
    auto r = compute_stats_and_histogram(v, 256, nullptr, threads);
    sink += r->histogram.total() == v.size() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args;
    std::string keep, only;
    bool gaussian = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
            keep = argv[++i];
        else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (std::strcmp(argv[i], "--cpu") == 0)
            g_cpu_time = true;
        else if (std::strcmp(argv[i], "--gaussian") == 0)
            gaussian = true;
        else
            args.emplace_back(argv[i]);
    }
    const uint64_t n = args.size() > 0 ? std::stoull(args[0]) : (16u << 20);
    const unsigned threads = args.size() > 1 ? static_cast<unsigned>(std::stoul(args[1])) : 2;
    const uint64_t row = 4096;
    if (n == 0 || n % row != 0) {
        std::fprintf(stderr, "the value count must be a positive multiple of the row length, %llu\n", static_cast<unsigned long long>(row));
        return 2;
    }
    std::printf("%llu values per tensor, %u threads, %s\n", static_cast<unsigned long long>(n), threads,
                g_cpu_time ? "CPU time of all threads" : "wall clock");
    test::TempDir dir;
    const std::vector<float> values = gaussian ? gaussian_weights(n, row) : test::test_signal(n, 7);
    std::vector<ggml_type> types = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,   GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL, GGML_TYPE_Q4_K,
                                    GGML_TYPE_Q5_K, GGML_TYPE_IQ4_XS, GGML_TYPE_Q6_K, GGML_TYPE_Q8_0, GGML_TYPE_BF16,   GGML_TYPE_F16};
    if (!only.empty()) {
        std::erase_if(types, [&](ggml_type t) { return only != ggml_type_name(t); });
        if (types.empty() && only != "mlx_int4" && only != "mlx_int8") {
            std::fprintf(stderr, "unknown type %s\n", only.c_str());
            return 1;
        }
    }
    const std::string path = keep.empty() ? dir.file("decode.gguf") : keep;
    {
        std::vector<test::FixtureTensor> tensors;
        for (ggml_type type : types) tensors.push_back({ggml_type_name(type), static_cast<uint32_t>(type), {row, n / row}, values});
        test::write_fixture_model(path, tensors);
    }
    auto model = open_gguf(path);
    std::string tsv = "tensor\tggml_gps\tdecode_gps\n";
    for (ggml_type type : types) {
        auto view = TensorView::open(*model, ggml_type_name(type));
        std::vector<uint8_t> whole_bytes;
        std::vector<float> whole_out;
        ggml_decode_whole(*view, whole_bytes, whole_out);  // allocates and faults the buffers in
        const StatsRoute route = route_of(*view, threads);
        const bool codes = through_groups(route);
        const WithoutCodeGroups by_values(*view);
        const auto t = best_s({[&] { ggml_decode(*view); }, [&] { ggml_decode_whole(*view, whole_bytes, whole_out); },
                               [&] { decode_parallel(*view, threads); }, [&] { analyze(*view, threads); },
                               [&] {
                                   if (codes) analyze(by_values, threads);
                               }});
        const double t_ref = t[0].chosen(), t_decode = t[2].chosen();
        report(ggml_type_name(type), route, n, t_ref, t[1].chosen(), t_decode, t[3].chosen(), codes ? t[4].chosen() : 0);
        report_statistics(n, threads, t[1], t[3]);
        if (route != StatsRoute::code_groups) {
            const std::vector<uint16_t> slots = fine_slots(whole_out);
            const auto floor = best_s({[&] { count_slots_only(slots); }});
            report_floor(n, threads, t[1], floor[0]);
        }
        tsv +=
            std::string(ggml_type_name(type)) + "\t" + std::to_string(n / t_ref / 1e9) + "\t" + std::to_string(n / t_decode / 1e9) + "\n";
    }
    if (only.empty()) {  // F16 reference against its Q4_K copy.
        auto f16 = TensorView::open(*model, ggml_type_name(GGML_TYPE_F16));
        auto q4k = TensorView::open(*model, ggml_type_name(GGML_TYPE_Q4_K));
        const auto t = best_s({[&] {
                                   ggml_decode(*f16);
                                   ggml_decode(*q4k);
                               },
                               [&] {
                                   auto c = compare_sources(*f16, *q4k, row, 10, nullptr, threads, 0.0, 1.0, 256);
                                   sink += c && c->count == n ? 0 : 1;
                               }});
        const double both = t[0].chosen(), compared = t[1].chosen();
        std::printf("compare F16 with Q4_K: ggml decoding both %6.3f G pairs/s   compare_sources %6.3f G pairs/s (%.2fx)\n", n / both / 1e9,
                    n / compared / 1e9, both / compared);
    }
    if (!keep.empty() && !(std::ofstream(keep + ".tsv") << tsv)) {
        std::fprintf(stderr, "cannot write %s.tsv\n", keep.c_str());
        return 1;
    }
    // MLX int4 and int8 (group 64) blobs; references: ggml whole of the same-layout type, our
    // decode on one thread. --only mlx_int4 or mlx_int8 runs one of them alone.
    for (uint32_t bits : {4u, 8u}) {
        const std::string name = "mlx_int" + std::to_string(bits);
        if (!only.empty() && only != name) continue;
        const ggml_type same_layout = bits == 4 ? GGML_TYPE_Q4_1 : GGML_TYPE_Q8_0;
        const std::string same_path = dir.file(name + "_ggml.gguf");
        test::write_fixture_model(same_path, {{"w", static_cast<uint32_t>(same_layout), {row, n / row}, values}});
        auto same_model = open_gguf(same_path);
        auto same_view = TensorView::open(*same_model, "w");
        std::vector<uint8_t> whole_bytes;
        std::vector<float> whole_out;
        ggml_decode_whole(*same_view, whole_bytes, whole_out);  // allocates and faults the buffers in
        auto q = mlx_quantize(MlxMode::affine, bits, 64, values.data(), n);
        std::vector<uint8_t> packed(q->packed.size() * 4), scales(q->scales.size() * 4), biases(q->biases.size() * 4);
        std::memcpy(packed.data(), q->packed.data(), packed.size());
        std::memcpy(scales.data(), q->scales.data(), scales.size());
        std::memcpy(biases.data(), q->biases.data(), biases.size());
        const std::string rows = std::to_string(n / row);
        // One safetensors blob as Ollama writes it: packed words, then scales, then biases.
        const std::string sshape = "[" + rows + "," + std::to_string(row / 64) + "]";
        const size_t p = packed.size(), s = scales.size();
        std::string header = "{\"__metadata__\":{\"quant_type\":\"int" + std::to_string(bits) +
            "\",\"group_size\":\"64\"},"
            "\"w\":{\"dtype\":\"U32\",\"shape\":[" +
            rows + "," + std::to_string(row * bits / 32) + "],\"data_offsets\":[0," + std::to_string(p) +
            "]},"
            "\"w.scale\":{\"dtype\":\"F32\",\"shape\":" +
            sshape + ",\"data_offsets\":[" + std::to_string(p) + "," + std::to_string(p + s) +
            "]},"
            "\"w.bias\":{\"dtype\":\"F32\",\"shape\":" +
            sshape + ",\"data_offsets\":[" + std::to_string(p + s) + "," + std::to_string(p + 2 * s) + "]}}";
        while (header.size() % 8) header += ' ';
        std::vector<uint8_t> file(8);
        const uint64_t len = header.size();
        std::memcpy(file.data(), &len, 8);
        file.insert(file.end(), header.begin(), header.end());
        for (const auto* part : {&packed, &scales, &biases}) file.insert(file.end(), part->begin(), part->end());
        test::write_whole_file(dir.file(name + ".safetensors"), file);
        auto model = open_safetensors(dir.file(name + ".safetensors"));
        describe_tensor_blobs(*model);
        auto view = TensorView::open(*model, "w");
        const WithoutCodeGroups by_values(*view);
        const StatsRoute route = route_of(*view, threads);
        const bool codes = through_groups(route);
        const auto t =
            best_s({[&] { decode_parallel(*view, 1); }, [&] { decode_parallel(*view, threads); }, [&] { analyze(*view, threads); },
                    [&] {
                        if (codes) analyze(by_values, threads);
                    },
                    [&] { ggml_decode_whole(*same_view, whole_bytes, whole_out); }});
        report(bits == 4 ? "int4 MLX" : "int8 MLX", route, n, t[0].chosen(), 0, t[1].chosen(), t[2].chosen(),
               codes ? t[3].chosen() : 0);
        report_statistics(n, threads, t[4], t[2], bits == 4 ? "ggml Q4_1 whole" : "ggml Q8_0 whole");
        report_statistics(n, threads, t[0], t[2], "our decode");
        if (route != StatsRoute::code_groups) {
            const std::vector<uint16_t> slots = fine_slots(whole_out);
            const auto floor = best_s({[&] { count_slots_only(slots); }});
            report_floor(n, threads, t[4], floor[0]);
        }
    }
    return sink == 0 ? 0 : 1;  // NaN-free signal: every decoded value equals itself
}
