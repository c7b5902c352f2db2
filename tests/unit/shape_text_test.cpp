// shape_text: every style on the shapes of the F32 demo model's tensors, and on no dimensions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "build_paths.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/model/shape_text.h"

using namespace mlens;

namespace {

const TensorInfo& tensor_named(const Model& model, const std::string& name) {
    auto it = std::find_if(model.tensors.begin(), model.tensors.end(), [&](const TensorInfo& t) { return t.name == name; });
    REQUIRE(it != model.tensors.end());
    return *it;
}

}  // namespace

TEST_CASE("shape_text renders a tensor shape in each style", "[shape_text]") {
    auto model = open_gguf(std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf");
    REQUIRE(model);
    const TensorInfo& embedding = tensor_named(*model, "token_embd.weight");
    constexpr ShapeOrder ne = ShapeOrder::fastest_first, slowest = ShapeOrder::slowest_first;
    CHECK(shape_text(embedding.ne, ShapeStyle::bracketed, ne) == "[64, 32000]");
    CHECK(shape_text(embedding.ne, ShapeStyle::bracketed, slowest) == "[32000, 64]");
    CHECK(shape_text(embedding.ne, ShapeStyle::times, ne) == "64 \xC3\x97 32000");
    CHECK(shape_text(embedding.ne, ShapeStyle::times, slowest) == "32000 \xC3\x97 64");
    CHECK(shape_text(embedding.ne, ShapeStyle::plain_x, ne) == "64 x 32000");
    // The leading dimensions only, as the store view shows one expert of a stacked tensor.
    CHECK(shape_text(std::span(embedding.ne).first(1), ShapeStyle::bracketed, slowest) == "[64]");

    const TensorInfo& norm = tensor_named(*model, "output_norm.weight");
    CHECK(shape_text(norm.ne, ShapeStyle::bracketed, ne) == "[64]");
    CHECK(shape_text(norm.ne, ShapeStyle::times, slowest) == "64");
}

TEST_CASE("each format's shapes are read in its own order, named in headers", "[shape_text]") {
    CHECK(shape_order(Format::gguf) == ShapeOrder::fastest_first);
    CHECK(shape_order(Format::safetensors) == ShapeOrder::slowest_first);
    CHECK(shape_order(Format::unknown) == ShapeOrder::fastest_first);
    CHECK(shape_header("Shape", shape_order(Format::gguf)) == "Shape (ne)");
    CHECK(shape_header("SHAPE", shape_order(Format::safetensors)) == "SHAPE (slowest first)");
    CHECK(std::string(shape_order_name(ShapeOrder::slowest_first)) == "slowest_first");
    const std::vector<uint64_t> expert_stack = {64, 64, 4};  // ne of 4 experts of 64 × 64
    CHECK(shape_text(expert_stack, ShapeStyle::times, shape_order(Format::safetensors)) == "4 \xC3\x97 64 \xC3\x97 64");
    CHECK(shape_text(expert_stack, ShapeStyle::bracketed, shape_order(Format::gguf)) == "[64, 64, 4]");
}

TEST_CASE("shape_text names a shape without dimensions in each style", "[shape_text]") {
    const std::vector<uint64_t> none;
    for (ShapeOrder order : {ShapeOrder::fastest_first, ShapeOrder::slowest_first}) {
        CHECK(shape_text(none, ShapeStyle::bracketed, order) == "[]");
        CHECK(shape_text(none, ShapeStyle::times, order) == "(scalar)");
        CHECK(shape_text(none, ShapeStyle::plain_x, order) == "scalar");
    }
}
