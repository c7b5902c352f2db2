// shape_text: every style on the shapes of the F32 demo model's tensors, and on no dimensions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

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
    CHECK(shape_text(embedding.ne, ShapeStyle::bracketed) == "[64, 32000]");
    CHECK(shape_text(embedding.ne, ShapeStyle::row_major) == "[32000, 64]");
    CHECK(shape_text(embedding.ne, ShapeStyle::times) == "64 \xC3\x97 32000");
    CHECK(shape_text(embedding.ne, ShapeStyle::plain_x) == "64 x 32000");
    // The leading dimensions only, as the store view shows one expert of a stacked tensor.
    CHECK(shape_text(std::span(embedding.ne).first(1), ShapeStyle::row_major) == "[64]");

    const TensorInfo& norm = tensor_named(*model, "output_norm.weight");
    CHECK(shape_text(norm.ne, ShapeStyle::bracketed) == "[64]");
    CHECK(shape_text(norm.ne, ShapeStyle::times) == "64");
}

TEST_CASE("shape_text names a shape without dimensions in each style", "[shape_text]") {
    const std::vector<uint64_t> none;
    CHECK(shape_text(none, ShapeStyle::bracketed) == "[]");
    CHECK(shape_text(none, ShapeStyle::row_major) == "[]");
    CHECK(shape_text(none, ShapeStyle::times) == "(scalar)");
    CHECK(shape_text(none, ShapeStyle::plain_x) == "scalar");
}
