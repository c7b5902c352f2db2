// Importance matrices written by llama.cpp's own llama-imatrix (tests/fixtures/imatrix/README.md):
// the GGUF's counts and sums are those gguf-py reads, the legacy file of the same run holds what
// llama-imatrix derives from them, and both drive requantization of the demo model.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "gguf_py.h"
#include "mlens/open/target.h"
#include "mlens/quant/imatrix.h"

using namespace mlens;

namespace {

const std::string kGguf = std::string(MLENS_IMATRIX_FIXTURES) + "/tiny-llama-f32.imatrix.gguf";
const std::string kLegacy = std::string(MLENS_IMATRIX_FIXTURES) + "/tiny-llama-f32.imatrix.dat";

}  // namespace

TEST_CASE("llama-imatrix's GGUF: every count and sum as gguf-py reads them", "[imatrix][gguf-py]") {
    if (auto why = test::gguf_py_unavailable()) FAIL(*why);
    CHECK(resolve(kGguf).kind == TargetKind::imatrix);
    Result<Imatrix> m = open_imatrix(kGguf);
    REQUIRE(m.ok());
    CHECK(m->format == ImatrixFormat::gguf);
    CHECK(m->datasets == std::vector<std::string>{"calib.txt"});
    CHECK(m->chunk_count == 6u);
    CHECK(m->chunk_size == 64u);
    // Every weight the demo model multiplies activations with, but the output (left out by default).
    REQUIRE(m->entries.size() == 14);
    std::string failure;
    std::optional<std::string> printed = test::gguf_py_tensor_values(kGguf, failure);
    INFO(failure);
    REQUIRE(printed);
    const auto theirs = nlohmann::json::parse(*printed);
    REQUIRE(theirs.size() == 28);
    for (const ImatrixEntry& e : m->entries) {
        INFO(e.name);
        CHECK(e.experts == 1);
        CHECK(e.counts == std::vector<double>{384});  // 6 chunks of 64 tokens
        CHECK(theirs.at(e.name + ".counts").get<std::vector<double>>() == e.counts);
        Result<std::vector<float>> sums = read_sums(*m, e, 0);
        REQUIRE(sums.ok());
        CHECK(std::vector<double>(sums->begin(), sums->end()) == theirs.at(e.name + ".in_sum2").get<std::vector<double>>());
    }
}

TEST_CASE("llama-imatrix's legacy file holds (sum / count) * ncall of the same run", "[imatrix]") {
    CHECK(resolve(kLegacy).kind == TargetKind::imatrix);
    Result<Imatrix> gguf = open_imatrix(kGguf);
    Result<Imatrix> legacy = open_imatrix(kLegacy);
    REQUIRE((gguf.ok() && legacy.ok()));
    CHECK(legacy->format == ImatrixFormat::legacy);
    CHECK(legacy->datasets == std::vector<std::string>{"calib.txt"});
    CHECK(legacy->chunk_count == 6u);
    REQUIRE(legacy->entries.size() == gguf->entries.size());
    for (size_t i = 0; i < gguf->entries.size(); ++i) {
        const ImatrixEntry &g = gguf->entries[i], &l = legacy->entries[i];
        INFO(g.name);
        CHECK(l.name == g.name);
        CHECK(l.columns == g.columns);
        const float ncall = 6;  // ceil(384 tokens / 64 per chunk)
        CHECK(l.counts == std::vector<double>{ncall});
        Result<std::vector<float>> gs = read_sums(*gguf, g, 0), ls = read_sums(*legacy, l, 0);
        REQUIRE((gs.ok() && ls.ok()));
        std::vector<float> expected;
        for (float s : *gs) expected.push_back(s / static_cast<float>(g.counts[0]) * ncall);
        CHECK(*ls == expected);
    }
}

TEST_CASE("mlens requant --imatrix takes llama-imatrix's files for the demo model", "[imatrix][cli]") {
    const std::string q4 = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf",
                      f32 = std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf";
    for (const std::string& file : {kGguf, kLegacy}) {
        auto run = test::run_mlens({"requant", q4, "blk.0.ffn_down.weight", "--reference", f32, "--imatrix", file, "--json"});
        INFO(run.err);
        REQUIRE(run.exit_status == 0);
        auto j = nlohmann::json::parse(run.out);
        CHECK(j["imatrix"]["entry"] == "blk.0.ffn_down.weight");
        CHECK(j["row_length"] == 192);
        for (const auto& t : j["types"]) CHECK(t["with_imatrix"] == true);
    }
}
