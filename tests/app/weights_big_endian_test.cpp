// The Weights panel's analysis of a big-endian GGUF: the values of its little-endian twin, and a
// type without a defined big-endian layout refused with the reason instead of a histogram.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <memory>
#include <string>
#include <vector>

#include "gguf_builder.h"
#include "mlens/analysis/weights_inspection.h"
#include "mlens/formats/gguf_reader.h"
#include "test_paths.h"

using namespace mlens;

namespace {

// "w" F32 ne [8, 2] holding (i - 7.5) / 2, and "q5k" Q5_K ne [256] of zero bytes, in either byte order.
std::shared_ptr<const Model> open_written(const test::TempDir& dir, bool big_endian) {
    test::GgufBuilder b;
    b.big_endian = big_endian;
    b.header(2, 1).kv_string("general.architecture", "llama");
    b.tensor_info("w", {8, 2}, GGML_TYPE_F32, 0).tensor_info("q5k", {256}, GGML_TYPE_Q5_K, 64);
    b.pad_to(32);
    for (int i = 0; i < 16; ++i) b.f32((static_cast<float>(i) - 7.5f) / 2);
    b.zeros(ggml_type_size(GGML_TYPE_Q5_K));
    const std::string path = dir.file(big_endian ? "be.gguf" : "le.gguf");
    test::write_whole_file(path, b.bytes);
    auto model = open_gguf(path);
    REQUIRE(model.ok());
    return std::make_shared<const Model>(std::move(model).value());
}

}  // namespace

TEST_CASE("analyze_weights reads a big-endian tensor as its little-endian twin and refuses a type without a layout", "[gui-weights]") {
    test::TempDir dir;
    const auto le = open_written(dir, false);
    const auto be = open_written(dir, true);
    REQUIRE(be->files[0].big_endian);

    WeightsRequest rq;
    rq.model = be;
    rq.tensor = 0;
    rq.bins = 8;
    rq.other = le;
    WeightsResult r;
    analyze_weights(rq, r, nullptr);
    REQUIRE(r.error.empty());
    REQUIRE(r.compare_error.empty());
    REQUIRE(r.stats);
    CHECK(r.stats->min == -3.75);
    CHECK(r.stats->max == 3.75);
    CHECK(r.stats->mean == 0);
    CHECK(r.histogram.counts == std::vector<uint64_t>{2, 2, 2, 2, 2, 2, 2, 2});
    CHECK(r.first_values[0][1] == -3.25f);
    CHECK(r.comparison.max_abs == 0);

    rq.tensor = 1;
    rq.other = nullptr;
    WeightsResult refused;
    analyze_weights(rq, refused, nullptr);
    CHECK(refused.error.find("Q5_K has no defined big-endian layout") != std::string::npos);
    CHECK(!refused.stats);
}
