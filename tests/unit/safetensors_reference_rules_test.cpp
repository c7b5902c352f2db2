// The rules of the reference reader (the `safetensors` crate: SafeTensors::read_metadata, the
// serde schema of the header, Metadata::validate) that malformed-inputs.md B2 does not spell out,
// each as a case: ModelLens accepts what the crate accepts and refuses what it refuses, with the
// crate's error name.
#include <catch2/catch.hpp>

#include "mlens/formats/safetensors_reader.h"
#include "safetensors_builder.h"

using namespace mlens;
using namespace mlens::test;

namespace {

std::vector<uint8_t> with_length(uint64_t n, std::vector<uint8_t> rest) {
    std::vector<uint8_t> bytes(8);
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(n >> (8 * i));
    bytes.insert(bytes.end(), rest.begin(), rest.end());
    return bytes;
}

}  // namespace

TEST_CASE("read_metadata: the length prefix is checked before it is added to", "[safetensors][reference]") {
    // The largest u64 is over the cap (HeaderTooLarge); 8 + N would wrap.
    require_rejected(with_length(UINT64_MAX, {'{', '}'}), "HeaderTooLarge", "header", 0);
    // The crate's test_header_too_large: N's high bytes set, the rest a valid file.
    auto s1 = s1_bytes();
    s1[5] = s1[6] = s1[7] = 0xFF;
    require_rejected(s1, "HeaderTooLarge", "header", 0);
    // test_invalid_header_length: N = 60 in a file of the 8 length bytes alone.
    require_rejected(with_length(60, {}), "InvalidHeaderLength", "header", 0);
    // test_invalid_header_non_utf8: one header byte, 0xFF.
    require_rejected(with_length(1, {0xFF}), "InvalidHeader", "header", 8);
}

TEST_CASE("read_metadata: only JSON whitespace may pad the object", "[safetensors][reference]") {
    // serde_json allows trailing whitespace (test_whitespace_padded_header), nothing else: NUL
    // padding, as some writers emit, is trailing characters.
    require_accepted(safetensors_bytes(std::string("{}\x0D\x20\x09\x0A"), 0));
    const std::string nul_padded = std::string("{}") + std::string(6, '\0');
    require_rejected(safetensors_bytes(nul_padded, 0), "InvalidHeaderDeserialization", "header", 8 + 2);
}

TEST_CASE("serde schema: a tensor entry in sequence form is read like the object", "[safetensors][reference]") {
    // serde's derived Deserialize of TensorInfo also takes [dtype, shape, data_offsets].
    std::string h = "{\"w\":[\"F32\",[2],[0,8]]}";
    Model m = require_accepted(safetensors_bytes(h, 8));
    REQUIRE(m.tensors.size() == 1);
    CHECK(m.tensors[0].type.name == "F32");
    CHECK(m.tensors[0].ne == std::vector<uint64_t>{2});
    CHECK(m.tensors[0].n_bytes == 8u);
    // Exactly three elements, each of its field's type.
    for (const char* entry : {"[\"F32\",[2]]", "[\"F32\",[2],[0,8],1]", "[]", "[\"F32\",[2],8]", "[2,[2],[0,8]]"}) {
        INFO(entry);
        std::string bad = std::string("{\"w\":") + entry + "}";
        Model r = read_safetensors(memory_source(safetensors_bytes(bad, 8)));
        REQUIRE(r.error_count() == 1);
        CHECK(r.diagnostics.back().code == ErrorCode::InvalidHeaderDeserialization);
        CHECK(r.diagnostics.back().field.starts_with("w"));
    }
}

TEST_CASE("serde schema: field names are compared after their escapes are decoded", "[safetensors][reference]") {
    std::string h = "{\"w\":{\"d\\u0074ype\":\"F32\",\"sh\\u0061pe\":[2],\"data_offsets\":[0,8]}}";
    Model m = require_accepted(safetensors_bytes(h, 8));
    REQUIRE(m.tensors.size() == 1);
    CHECK(m.tensors[0].type.name == "F32");
}

TEST_CASE("validate: zero-size tensors take part in the contiguity of the offsets", "[safetensors][reference]") {
    const std::string t0 = st_entry("t0", "F32", "[2]", 0, 8);
    SECTION("at the end of the data: accepted") {
        require_accepted(safetensors_bytes("{" + t0 + "," + st_entry("z", "F32", "[0]", 8, 8) + "}", 8));
    }
    SECTION("inside another tensor's range: InvalidOffset") {
        std::string h = "{" + t0 + "," + st_entry("z", "F32", "[0]", 4, 4) + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidOffset", "z.data_offsets", header_offset(h, "[4,4]"));
    }
    SECTION("past the end of the data: InvalidOffset") {
        std::string h = "{" + t0 + "," + st_entry("z", "F32", "[0]", 16, 16) + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidOffset", "z.data_offsets", header_offset(h, "[16,16]"));
    }
    SECTION("sorted by (begin, end): a zero-size tensor at 0 listed after the first") {
        require_accepted(safetensors_bytes("{" + t0 + "," + st_entry("z", "F32", "[0]", 0, 0) + "}", 8));
    }
    SECTION("an end before the next begin") {
        std::string h = "{" + t0 + "," + st_entry("t1", "F32", "[2]", 8, 4) + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidOffset", "t1.data_offsets", header_offset(h, "[8,4]"));
    }
}

TEST_CASE("validate: the element count overflows as the crate multiplies, left to right", "[safetensors][reference]") {
    // 1 * 2^63 * 2 overflows before the 0 is reached: ValidationOverflow, though the product is 0.
    std::string late_zero = "{" + st_entry("w", "F32", "[9223372036854775808,2,0]", 0, 0) + "}";
    require_rejected(safetensors_bytes(late_zero, 0), "ValidationOverflow", "w.shape", header_offset(late_zero, "[92"));
    // A 0 first keeps every partial product at 0.
    std::string early_zero = "{" + st_entry("w", "F32", "[0,9223372036854775808,2]", 0, 0) + "}";
    Model m = require_accepted(safetensors_bytes(early_zero, 0));
    CHECK(m.tensors[0].n_elements == 0);
}
