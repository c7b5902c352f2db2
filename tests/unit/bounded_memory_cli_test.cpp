// The mlens analyses (compare, requant, diff --numeric, stats, hist) under a 2 GB address-space
// limit, on sparse files whose tensors claim far more than that: a 2^29-value row they finish,
// and a 1 TiB GGUF and a safetensors header claiming 100 GB that they work through in bounded
// memory until interrupted, when they stop with "cancelled".
#include <catch2/catch.hpp>

#include <ggml.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "mlens/util/analysis_memory.h"
#include "sparse_models.h"
#include "test_paths.h"
#include "time_limit.h"

using namespace mlens;

namespace {

// AddressSanitizer reserves terabytes of shadow address space, so its build runs without the limit.
#ifdef __SANITIZE_ADDRESS__
constexpr uint64_t kAddressSpace = 0;
#else
constexpr uint64_t kAddressSpace = uint64_t{2} << 30;
#endif

// Resident memory of the command beyond what its analysis may use: code, ggml and the model.
constexpr uint64_t kProcessBaseline = 128u << 20;

void check_bounded(const test::CliRun& run) {
#ifndef __SANITIZE_ADDRESS__
    CHECK(run.peak_rss_bytes < kAnalysisMemoryBound + kProcessBaseline);
#endif
    CHECK(run.err.find("bad_alloc") == std::string::npos);
}

}  // namespace

TEST_CASE("a 2^29-value row: compare, requant, diff --numeric, stats and hist finish under a 2 GB limit", "[bounded][cli]") {
    test::TempDir dir;
    // One Q4_0 row of 2^29 values (288 MiB, all zero) as A; B the same with block 8's d = 1.0, so
    // its 32 values (zero codes) are -8.
    const uint64_t n = uint64_t{1} << 29;
    const std::string a = dir.file("a.gguf"), b = dir.file("b.gguf");
    REQUIRE(test::write_sparse_gguf(a, {{"w", GGML_TYPE_Q4_0, {n}}}).size() == 1);
    auto offsets = test::write_sparse_gguf(b, {{"w", GGML_TYPE_Q4_0, {n}}});
    REQUIRE(offsets.size() == 1);
    REQUIRE(test::patch_file(b, offsets[0] + 8 * 18, {0x00, 0x3C}));
    const test::CliLimits limits{kAddressSpace, 0};

    auto compare = test::run_mlens({"compare", a, b, "--json"}, limits);
    INFO(compare.err);
    REQUIRE(compare.exit_status == 0);
    check_bounded(compare);
    auto c = nlohmann::json::parse(compare.out)["tensors"].at(0);
    CHECK(c["count"] == n);
    CHECK(c["max_abs"] == 8.0);
    CHECK(c["rmse"].get<double>() == Approx(std::sqrt(32.0 * 64.0 / static_cast<double>(n))));
    CHECK(c["worst_rows"].at(0)["row"] == 0);
    CHECK(c["worst_blocks"].at(0)["block"] == 8);
    CHECK(c["worst_blocks"].at(0)["column"] == 256);
    CHECK(c["worst_blocks"].at(0)["rmse"] == 8.0);

    auto diff = test::run_mlens({"diff", a, b, "--numeric", "--json"}, limits);
    INFO(diff.err);
    REQUIRE(diff.exit_status == 0);
    check_bounded(diff);
    auto d = nlohmann::json::parse(diff.out);
    REQUIRE(d["tensors"].size() == 1);
    CHECK(d["tensors"][0]["changes"] == nlohmann::json::array({"values"}));
    CHECK(d["tensors"][0]["error"]["max_abs"] == 8.0);

    auto requant = test::run_mlens({"requant", b, "w", "--types", "Q8_0", "--json"}, limits);
    INFO(requant.err);
    REQUIRE(requant.exit_status == 0);
    check_bounded(requant);
    auto r = nlohmann::json::parse(requant.out)["types"].at(0);
    CHECK(r["type"] == "Q8_0");
    CHECK(r["max_abs"].get<double>() < 0.01);

    auto stats = test::run_mlens({"stats", b, "w", "--json"}, limits);
    INFO(stats.err);
    REQUIRE(stats.exit_status == 0);
    check_bounded(stats);
    auto s = nlohmann::json::parse(stats.out);
    CHECK(s["count"] == n);
    CHECK(s["min"] == -8.0);
    CHECK(s["max"] == 0.0);
    CHECK(s["zeros"] == n - 32);
    // 2^24 blocks: the d series samples one block in 8, block 8 among them.
    auto scale_d = s["block_scales"].at(0);
    CHECK(scale_d["name"] == "d");
    CHECK(scale_d["stride"] == 8);
    CHECK(scale_d["count"] == (n / 32) / 8);
    CHECK(scale_d["max"] == 1.0);
    CHECK(s["rows"].at(1)["name"] == "row_absmax");
    CHECK(s["rows"].at(1)["max"] == 8.0);

    auto hist = test::run_mlens({"hist", b, "w", "--bins", "4", "--json"}, limits);
    INFO(hist.err);
    REQUIRE(hist.exit_status == 0);
    check_bounded(hist);
    auto h = nlohmann::json::parse(hist.out);
    CHECK(h["lo"] == -8.0);
    CHECK(h["hi"] == 0.0);
    CHECK(h["counts"] == nlohmann::json::array({32, 0, 0, n - 32}));
}

TEST_CASE("a 1 TiB GGUF and a safetensors header claiming 100 GB are analysed in bounded memory until interrupted", "[bounded][cli]") {
    test::TempDir dir;
    // F16 [2^37, 4] (1 TiB of data); BF16 [2, 25e9] (100 GB): rows far beyond the address space.
    const std::string gguf = dir.file("huge.gguf"), st = dir.file("huge.safetensors");
    REQUIRE(test::write_sparse_gguf(gguf, {{"w", GGML_TYPE_F16, {uint64_t{1} << 37, 4}}}).size() == 1);
    REQUIRE(test::write_sparse_safetensors(st, "w", "BF16", {2, 25000000000}, 100000000000) != 0);
    // Interrupted after a second (Ctrl+C): each is still reading, and stops cleanly. The sanitizer
    // build gets kSlowdown seconds: a signal that comes while its slower start is still opening
    // the files, before the command's job exists, ends the process as Ctrl+C there does.
    const test::CliLimits limits{kAddressSpace, 1.0 * test::kSlowdown, SIGINT};
    for (const std::string& path : {gguf, st}) {
        for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{{"compare", path, path},
                                                                                          {"diff", path, path, "--numeric"},
                                                                                          {"requant", path, "w", "--types", "Q4_0,Q4_K"},
                                                                                          {"stats", path, "w"},
                                                                                          {"hist", path, "w"}}) {
            auto run = test::run_mlens(args, limits);
            INFO(args[0] << " " << path << ": " << run.err);
            CHECK(run.timed_out);
            CHECK(run.exit_status == 1);
            CHECK(run.err == "error: E_CANCELLED: cancelled\n");
            check_bounded(run);
        }
    }
    // Without the hole behind it, the header's claim is refused when the file opens.
    const std::string claim = dir.file("claim.safetensors");
    const uint64_t data = test::write_sparse_safetensors(claim, "w", "BF16", {2, 25000000000}, 100000000000);
    REQUIRE(::truncate(claim.c_str(), static_cast<off_t>(data)) == 0);
    auto refused = test::run_mlens({"stats", claim, "w"}, test::CliLimits{kAddressSpace, 0});
    CHECK(refused.exit_status == 1);
    CHECK(!refused.err.empty());
    check_bounded(refused);
}
