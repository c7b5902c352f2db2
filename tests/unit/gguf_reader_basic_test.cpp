#include <catch2/catch.hpp>

#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"

using namespace mlens;

TEST_CASE("T1 parses with every field and byte range") {
    auto bytes = test::t1_bytes();
    REQUIRE(bytes.size() == 256);
    Model m = read_gguf(memory_source(bytes));
    REQUIRE(m.diagnostics.empty());
    REQUIRE(!m.partial);
    REQUIRE(m.metadata.size() == 1);
    CHECK(m.metadata[0].key == "general.architecture");
    CHECK(m.metadata[0].key_range.offset == 24);
    CHECK(m.metadata[0].type_range.offset == 52);
    CHECK(m.metadata[0].value_range.offset == 56);
    CHECK(m.metadata[0].value.text == "llama");
    REQUIRE(m.tensors.size() == 1);
    const TensorInfo& t = m.tensors[0];
    CHECK(t.name == "w");
    CHECK(t.info_range.offset == 69);
    CHECK(t.info_range.end() == 102);
    CHECK(t.type.name == "F32");
    CHECK(t.data_offset == 128);
    CHECK(*t.n_bytes == 128);
    float v[32];
    REQUIRE(m.read_tensor_bytes(0, 0, 128, v).ok());
    CHECK(v[31] == 31.0f);
}
