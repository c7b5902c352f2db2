// Importance matrices that lie: a legacy entry count that a sparse file's size allows but that is
// no importance matrix, counts that are NaN, infinite, negative or beyond 2^53, and sums that
// are NaN, infinite or negative. Each is refused with the entry, the field and the offset, by the
// reader, by mlens imatrix and by mlens requant (which never quantizes with such a matrix).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "build_paths.h"
#include "cli_runner.h"
#include "imatrix_fixture.h"
#include "memory_watch.h"
#include "mlens/quant/imatrix.h"
#include "test_paths.h"

using namespace mlens;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

// A stacked expert tensor of 3 experts × 4 columns and the demo model's blk.0.attn_q.weight
// (rows of 64 values).
std::vector<test::ImatrixFixtureEntry> entries() {
    std::vector<float> q_sums(64);
    for (size_t i = 0; i < q_sums.size(); ++i) q_sums[i] = 1.0f + static_cast<float>(i);
    return {{"blk.0.ffn_down_exps.weight", 4, {10, 0, 4}, {1, 2, 3, 4, 0, 0, 0, 0, 8, 0, 2, 6}},
            {"blk.0.attn_q.weight", 64, {16}, q_sums}};
}

Result<Imatrix> gguf_with(const std::vector<test::ImatrixFixtureEntry>& e) {
    return read_imatrix(memory_source(test::gguf_imatrix_bytes(e, {"d"}, 1, 512), "im.gguf"));
}

Result<Imatrix> legacy_with(const std::vector<test::ImatrixFixtureEntry>& e) {
    return read_imatrix(memory_source(test::legacy_imatrix_bytes(e, 1, "d"), "im.dat"));
}

}  // namespace

TEST_CASE("a sparse legacy imatrix claiming 2^31-1 entries is refused before anything is reserved", "[imatrix][limits]") {
    test::TempDir dir;
    const std::string path = dir.file("x.dat");
    test::write_whole_file(path, {0xff, 0xff, 0xff, 0x7f});
    REQUIRE(::truncate(path.c_str(), static_cast<off_t>(16 * ((uint64_t{1} << 31) - 1) + 4)) == 0);
    Result<Imatrix> opened = Error{};
    const uint64_t grew = test::peak_growth_bytes([&] { opened = open_imatrix(path); });
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.error().code == ErrorCode::E_LIMIT);
    CHECK(opened.error().field == "n_entries");
    CHECK(opened.error().offset == 0u);
    CHECK(opened.error().message ==
          "not a GGUF, and not a legacy imatrix: 2147483647 entries, more than the 1048576 an importance matrix is read with");
    CHECK(grew < (64u << 20));
    CHECK_FALSE(looks_like_imatrix(*open_file(path).value()));

    test::CliRun run = test::run_mlens({"imatrix", path});
    CHECK(run.exit_status == 1);
    CHECK(run.signal == 0);
    CHECK(run.err.find("bad_alloc") == std::string::npos);
    CHECK(run.err.find("2147483647 entries, more than the 1048576 an importance matrix is read with") != std::string::npos);

    // A count within the limit in a sparse file: the first entry is not there.
    const std::string some = dir.file("some.dat");
    test::write_whole_file(some, {0xe8, 0x03, 0x00, 0x00});
    REQUIRE(::truncate(some.c_str(), 16 * 1000 + 4) == 0);
    Result<Imatrix> thousand = open_imatrix(some);
    CHECK(thousand.error().code == ErrorCode::E_COUNT);
    CHECK(thousand.error().field == "entries[0].name_length");
    CHECK(thousand.error().offset == 4u);
}

TEST_CASE("GGUF imatrix counts that are NaN, infinite, negative or beyond 2^53 are refused", "[imatrix][limits]") {
    const Result<Imatrix> good = gguf_with(entries());
    REQUIRE(good.ok());
    const uint64_t exps_counts = good->entries[0].counts_offset;
    struct Case {
        float count;
        const char* shown;
    };
    for (const Case& c : {Case{kNaN, "nan"}, Case{kInf, "inf"}, Case{-1.0f, "-1"}, Case{1e20f, "1.0000000e+20"}}) {
        INFO(c.shown);
        std::vector<test::ImatrixFixtureEntry> e = entries();
        e[0].counts[2] = c.count;
        Result<Imatrix> bad = gguf_with(e);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().code == ErrorCode::E_IMATRIX_VALUE);
        CHECK(bad.error().field == "tensors.blk.0.ffn_down_exps.weight.counts");
        CHECK(bad.error().offset == exps_counts + 8);
        CHECK(bad.error().message == std::string("blk.0.ffn_down_exps.weight: the count of expert 2 is ") + c.shown +
                                         ", where a count is a number of tokens from 0 to 2^53");
    }
    // 2^53 itself is a count.
    std::vector<test::ImatrixFixtureEntry> e = entries();
    e[0].counts[2] = 9007199254740992.0f;
    Result<Imatrix> most = gguf_with(e);
    REQUIRE(most.ok());
    CHECK(most->entries[0].counts[2] == 9007199254740992.0);
}

TEST_CASE("imatrix sums that are NaN, infinite or negative are refused where they are read", "[imatrix][limits]") {
    std::vector<test::ImatrixFixtureEntry> e = entries();
    e[0].sums[9] = kNaN;  // expert 2, column 1
    e[1].sums[5] = -2.0f;
    Result<Imatrix> gguf = gguf_with(e);
    REQUIRE(gguf.ok());  // sums are read on demand
    Result<ImatrixEntrySummary> summary = summarize_entry(*gguf, gguf->entries[0]);
    REQUIRE_FALSE(summary.ok());
    CHECK(summary.error().code == ErrorCode::E_IMATRIX_VALUE);
    CHECK(summary.error().field == "tensors.blk.0.ffn_down_exps.weight.in_sum2");
    CHECK(summary.error().offset == gguf->entries[0].sums_offset + 9 * 4);
    CHECK(summary.error().message ==
          "blk.0.ffn_down_exps.weight: the sum of column 1 of expert 2 is nan, where a sum of squared activations is finite and not "
          "negative");
    Result<ColumnImportance> q = importance_for(*gguf, "blk.0.attn_q.weight", 64, 64, std::nullopt);
    REQUIRE_FALSE(q.ok());
    CHECK(q.error().field == "tensors.blk.0.attn_q.weight.in_sum2");
    CHECK(q.error().offset == gguf->entries[1].sums_offset + 5 * 4);
    CHECK(q.error().message ==
          "blk.0.attn_q.weight: the sum of column 5 is -2, where a sum of squared activations is finite and not negative");

    e = entries();
    e[1].sums[63] = kInf;
    Result<Imatrix> legacy = legacy_with(e);
    REQUIRE(legacy.ok());
    Result<ColumnImportance> l = importance_for(*legacy, "blk.0.attn_q.weight", 64, 64, std::nullopt);
    REQUIRE_FALSE(l.ok());
    CHECK(l.error().code == ErrorCode::E_IMATRIX_VALUE);
    CHECK(l.error().field == "entries[1].values");
    CHECK(l.error().offset == legacy->entries[1].sums_offset + 63 * 4);
    CHECK(l.error().message ==
          "blk.0.attn_q.weight: the sum of column 63 is inf, where a sum of squared activations is finite and not negative");
}

TEST_CASE("mlens requant and mlens imatrix refuse a poisoned importance matrix with the reason", "[imatrix][limits][requant][cli]") {
    test::TempDir dir;
    std::vector<test::ImatrixFixtureEntry> e = entries();
    e[1].sums[3] = kNaN;
    test::write_whole_file(dir.file("nan.gguf"), test::gguf_imatrix_bytes(e, {"d"}, 1, 512));
    test::write_whole_file(dir.file("nan.dat"), test::legacy_imatrix_bytes(e, 1, "d"));
    e = entries();
    e[1].counts[0] = 1e20f;
    test::write_whole_file(dir.file("count.gguf"), test::gguf_imatrix_bytes(e, {"d"}, 1, 512));

    const std::string why = "blk.0.attn_q.weight: the sum of column 3 is nan, where a sum of squared activations is finite and not negative";
    for (const char* name : {"nan.gguf", "nan.dat"}) {
        INFO(name);
        test::CliRun requant = test::run_mlens(
            {"requant", demo("tiny-llama-f32.gguf"), "blk.0.attn_q.weight", "--types", "Q4_0,IQ4_NL", "--imatrix", dir.file(name)});
        CHECK(requant.exit_status == 1);
        CHECK(requant.out.empty());
        CHECK(requant.err == "error: " + dir.file(name) + ": " + why + "\n");
        test::CliRun listing = test::run_mlens({"imatrix", dir.file(name)});
        CHECK(listing.exit_status == 1);
        CHECK(listing.err.find(why) != std::string::npos);
    }
    test::CliRun count = test::run_mlens(
        {"requant", demo("tiny-llama-f32.gguf"), "blk.0.attn_q.weight", "--types", "Q4_0", "--imatrix", dir.file("count.gguf"), "--json"});
    CHECK(count.exit_status == 1);
    CHECK(count.err.find("E_IMATRIX_VALUE") != std::string::npos);
    CHECK(count.err.find("blk.0.attn_q.weight: the count of expert 0 is 1.0000000e+20") != std::string::npos);
    CHECK(count.out.find("rmse") == std::string::npos);
}
