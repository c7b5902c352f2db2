// malformed-inputs.md B2, S01-S14: the length prefix, the header text and the entry schema.
#include <catch2/catch.hpp>

#include "mlens/formats/safetensors_reader.h"
#include "safetensors_builder.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const Diagnostic& only_error(const Model& m) {
    for (const Diagnostic& d : m.diagnostics)
        if (d.severity == Severity::error) return d;
    FAIL("no error diagnostic");
    return m.diagnostics.front();
}

}  // namespace

TEST_CASE("S01 files of 0, 1 and 7 bytes are too small", "[safetensors]") {
    for (size_t n : {0, 1, 7}) {
        INFO(n << " bytes");
        require_rejected(std::vector<uint8_t>(n, 0), "HeaderTooSmall", "header", 0);
    }
}

TEST_CASE("S02 a zero-length header is EOF while parsing", "[safetensors]") {
    Model m = require_rejected(safetensors_bytes("", 8), "InvalidHeaderDeserialization", "header", 8);
    CHECK_THAT(only_error(m).message, Catch::Contains("EOF while parsing"));
}

TEST_CASE("S03 a header length past the end of the file", "[safetensors]") {
    auto bytes = test::s1_bytes();
    auto bad = safetensors_bytes(test::s1_header() + "  ", {bytes.end() - 8, bytes.end()}, 1000);
    REQUIRE(bad.size() == 72);
    require_rejected(bad, "InvalidHeaderLength", "header", 0);
}

TEST_CASE("S04a a header length over the cap, in a 72-byte file", "[safetensors]") {
    auto bytes = test::s1_bytes();
    auto bad = safetensors_bytes(test::s1_header() + "  ", {bytes.end() - 8, bytes.end()}, 100'000'001);
    Model m = require_rejected(bad, "HeaderTooLarge", "header", 0);
    CHECK_THAT(only_error(m).message, Catch::Contains("max_header_bytes=100000000"));
}

TEST_CASE("S05 header bytes that are not UTF-8", "[safetensors]") {
    std::string h = "{" + st_entry("w\xff", "F32", "[2]", 0, 8) + "}";
    require_rejected(safetensors_bytes(h, 8), "InvalidHeader", "header", 8 + 3);
    std::string overlong = "{" + st_entry("w\xc0\xaf", "F32", "[2]", 0, 8) + "}";
    require_rejected(safetensors_bytes(overlong, 8), "InvalidHeader", "header", 8 + 3);
}

TEST_CASE("S06 invalid JSON is rejected at its byte offset", "[safetensors]") {
    const std::string entry = st_entry("w", "F32", "[2]", 0, 8);
    SECTION("an unclosed object") {
        Model m = require_rejected(safetensors_bytes("{", 8), "InvalidHeaderDeserialization", "header", 9);
        CHECK_THAT(only_error(m).message, Catch::Contains("EOF while parsing"));
    }
    SECTION("a missing value") { require_rejected(safetensors_bytes("{\"w\":}", 8), "InvalidHeaderDeserialization", "header", 13); }
    SECTION("single quotes") {
        std::string h = "{'w':{'dtype':'F32','shape':[2],'data_offsets':[0,8]}}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "header", 9);
    }
    SECTION("a comment") {
        std::string h = "{/*comment*/" + entry + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "header", 9);
    }
    SECTION("a trailing comma") {
        std::string h = "{" + entry + ",}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "header", 8 + h.size() - 1);
    }
    SECTION("garbage after the object") {
        std::string h = "{" + entry + "} x";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "header", 8 + h.size() - 1);
    }
    SECTION("a lone surrogate escape") {
        std::string h = "{" + st_entry("\\ud800", "F32", "[2]", 0, 8) + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "header", 8 + 8);  // where a low surrogate must follow
    }
    SECTION("a raw control character in a string") {
        std::string h = "{" + st_entry("a\tb", "F32", "[2]", 0, 8) + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "header", 8 + 3);
    }
}

TEST_CASE("S07 a header that is not an object", "[safetensors]") {
    for (std::string h : {"[]", "\"x\"", "1", "null", "\xef\xbb\xbf{}"}) {
        INFO(h);
        Model m = require_rejected(safetensors_bytes(h, 0), "InvalidHeaderStart", "header", 8);
        CHECK_THAT(only_error(m).message, Catch::Contains("expected an object"));
    }
}

TEST_CASE("S08 whitespace around the object is accepted, leading whitespace with a warning", "[safetensors]") {
    auto s1 = test::s1_bytes();
    std::string h = "\t\n" + test::s1_header() + "\r ";
    Model m = require_accepted(safetensors_bytes(h, {s1.end() - 8, s1.end()}), 1);
    CHECK(m.diagnostics[0].code == ErrorCode::W_LEADING_WHITESPACE);
    CHECK(m.diagnostics[0].field == "header");
    CHECK(m.diagnostics[0].offset == 8u);
    REQUIRE(m.tensors.size() == 1);
    CHECK(m.tensors[0].data_offset == 8 + 58);
    float v[2];
    REQUIRE(m.read_tensor_bytes(0, 0, 8, v).ok());
    CHECK(v[1] == -2.0f);
}

TEST_CASE("S09 an empty header with and without a data byte", "[safetensors]") {
    Model m = require_accepted(safetensors_bytes("{}", 0));
    CHECK(m.tensors.empty());
    CHECK(m.metadata.empty());
    require_rejected(safetensors_bytes("{}", 1), "MetadataIncompleteBuffer", "data", 10);
}

TEST_CASE("S10 a tensor entry missing a field", "[safetensors]") {
    const std::pair<const char*, const char*> cases[] = {
        {"{\"w\":{\"shape\":[2],\"data_offsets\":[0,8]}}", "w.dtype"},
        {"{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", "w.shape"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}", "w.data_offsets"},
    };
    for (auto [h, field] : cases) {
        INFO(h);
        Model m = require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", field, 8 + 5);
        CHECK_THAT(only_error(m).message, Catch::Contains("missing field"));
    }
}

TEST_CASE("S11 an unknown field in a tensor entry is accepted with a warning", "[safetensors]") {
    std::string h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"foo\":1}}";
    Model m = require_accepted(safetensors_bytes(h, 8), 1);
    const Diagnostic& d = m.diagnostics[0];
    CHECK(d.code == ErrorCode::W_UNKNOWN_FIELD);
    CHECK(d.field == "w.foo");
    CHECK(d.offset == header_offset(h, "\"foo\""));
    CHECK_THAT(d.message, Catch::Contains("foo"));
    SECTION("whatever JSON the unknown field holds") {
        std::string nested = "{\"w\":{\"x\":{\"a\":[1,{\"b\":null}],\"c\":-1.5e3},\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
        Model n = require_accepted(safetensors_bytes(nested, 8), 1);
        CHECK(n.tensors.size() == 1);
    }
}

TEST_CASE("S12 unknown or miscased dtypes", "[safetensors]") {
    for (const char* dtype : {"F8", "f32", "Q4_0", "U128", ""}) {
        INFO(dtype);
        std::string h = "{" + st_entry("w", dtype, "[2]", 0, 8) + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "w.dtype", 8 + 14);
    }
    std::string number = "{\"w\":{\"dtype\":7,\"shape\":[2],\"data_offsets\":[0,8]}}";
    require_rejected(safetensors_bytes(number, 8), "InvalidHeaderDeserialization", "w.dtype", 8 + 14);
}

TEST_CASE("S14 shape elements that are not canonical u64 integers", "[safetensors]") {
    for (const char* element : {"-1", "2.0", "\"2\"", "1e3", "18446744073709551616", "02", "-0", "true", "null", "[2]"}) {
        INFO(element);
        std::string shape = std::string("[1,") + element + "]";
        std::string h = "{" + st_entry("w", "F32", shape, 0, 8) + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "w.shape", header_offset(h, shape) + 3);
    }
    std::string object = "{" + st_entry("w", "F32", "{}", 0, 8) + "}";
    require_rejected(safetensors_bytes(object, 8), "InvalidHeaderDeserialization", "w.shape", header_offset(object, "{}"));
}

TEST_CASE("the largest u64 is a valid shape element and offset value", "[safetensors]") {
    std::string zero = "{" + st_entry("w", "U8", "[18446744073709551615,0]", 0, 0) + "}";
    Model m = require_accepted(safetensors_bytes(zero, 0));
    CHECK(m.tensors[0].ne == std::vector<uint64_t>{0, 18446744073709551615ull});
    CHECK(m.tensors[0].n_elements == 0);
    // Parsed fine; rejected only by the layout rules (the range is not 8 bytes long).
    std::string far = "{" + st_entry("w", "U8", "[8]", 0, 18446744073709551615ull) + "}";
    require_rejected(safetensors_bytes(far, 8), "TensorInvalidInfo", "w.data_offsets", header_offset(far, "[0,"));
}
