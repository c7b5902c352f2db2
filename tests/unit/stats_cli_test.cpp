// mlens stats: the dequantized values' statistics and, for quantized types, one entry per
// block-scale series with the statistics of that series.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/quant/block_scales.h"
#include "model_fixture.h"
#include "test_paths.h"

using namespace mlens;

TEST_CASE("mlens stats reports each block-scale series of a quantized tensor", "[stats_cli]") {
    test::TempDir dir;
    const auto values = test::test_signal(2048, 4);
    test::write_fixture_model(dir.file("m.gguf"), {{"q", GGML_TYPE_Q4_K, {256, 8}, values}, {"f", GGML_TYPE_F32, {256, 8}, values}});
    auto run = test::run_mlens({"stats", dir.file("m.gguf"), "q", "--json"});
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    const auto out = nlohmann::json::parse(run.out);
    CHECK(out["count"] == 2048);
    const auto& series = out["block_scales"];
    REQUIRE(series.size() == 4);
    // Q4_K: d and dmin per 256-value super-block, sub_scale and sub_min per 32-value sub-block.
    const std::vector<std::pair<std::string, uint64_t>> expected = {{"d", 256}, {"dmin", 256}, {"sub_scale", 32}, {"sub_min", 32}};
    auto model = open_gguf(dir.file("m.gguf"));
    auto scales = block_scales(*TensorView::open(*model, "q"));
    REQUIRE(scales.ok());
    for (size_t i = 0; i < expected.size(); ++i) {
        INFO(expected[i].first);
        CHECK(series[i]["name"] == expected[i].first);
        CHECK(series[i]["values_per_entry"] == expected[i].second);
        CHECK(series[i]["count"] == 2048 / expected[i].second);
        const std::vector<float>& v = scales->series[i].values;
        CHECK(series[i]["min"].get<double>() == *std::min_element(v.begin(), v.end()));
        CHECK(series[i]["max"].get<double>() == *std::max_element(v.begin(), v.end()));
    }

    auto text = test::run_mlens({"stats", dir.file("m.gguf"), "q"});
    CHECK(text.out.find("block scales") != std::string::npos);
    CHECK(text.out.find("sub_scale") != std::string::npos);

    auto plain = test::run_mlens({"stats", dir.file("m.gguf"), "f", "--json"});
    REQUIRE(plain.exit_status == 0);
    CHECK(nlohmann::json::parse(plain.out)["block_scales"].empty());
    CHECK(test::run_mlens({"stats", dir.file("m.gguf"), "f"}).out.find("block scales") == std::string::npos);
}

TEST_CASE("mlens stats reports the RMS and max |x| of every row", "[stats_cli]") {
    test::TempDir dir;
    // 3 rows of 4: row 1 has a NaN (left out), row 2 is all zeros.
    std::vector<float> v = {1, -2, 2, -1, 3, NAN, -4, 0, 0, 0, 0, 0};
    test::write_fixture_model(dir.file("m.gguf"), {{"f", GGML_TYPE_F32, {4, 3}, v}});
    auto run = test::run_mlens({"stats", dir.file("m.gguf"), "f", "--json"});
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    const auto rows = nlohmann::json::parse(run.out)["rows"];
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["name"] == "row_rms");
    CHECK(rows[0]["values_per_entry"] == 4);
    CHECK(rows[0]["count"] == 3);
    CHECK(rows[0]["min"] == 0.0);
    CHECK(rows[0]["max"].get<double>() == Approx(std::sqrt(25.0 / 3)));  // row 1: (9 + 16 + 0) / 3
    CHECK(rows[0]["mean"].get<double>() == Approx((std::sqrt(10.0 / 4) + std::sqrt(25.0 / 3)) / 3));
    CHECK(rows[1]["name"] == "row_absmax");
    CHECK(rows[1]["max"] == 4.0);
    CHECK(rows[1]["min"] == 0.0);
    CHECK(rows[1]["zeros"] == 1);
}
