// malformed-inputs.md B2, S13 and S15-S31 (except the big files of S18 and S30, in
// safetensors_limits_test.cpp): sizes, offsets, coverage, duplicates, __metadata__, names, depth.
#include <catch2/catch.hpp>

#include "mlens/formats/safetensors_dtype.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/text/escape.h"
#include "safetensors_builder.h"

using namespace mlens;
using namespace mlens::test;

TEST_CASE("S13 all 22 dtypes, shape [8] each, packed in order", "[safetensors]") {
    const char* names[] = {"BOOL", "F4",  "F6_E2M3", "F6_E3M2", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ",
                           "I16",  "U16", "F16",     "BF16",    "I32", "U32", "F32",     "C64",     "F64",     "I64",         "U64"};
    const uint64_t bits[] = {8, 4, 6, 6, 8, 8, 8, 8, 8, 8, 8, 16, 16, 16, 16, 32, 32, 32, 64, 64, 64, 64};
    test::SafetensorsBuilder b;
    for (size_t i = 0; i < 22; ++i) b.tensor(std::string("t_") + names[i], names[i], "[8]", std::vector<uint8_t>(bits[i], uint8_t(i)));
    Model m = require_accepted(b.bytes());
    REQUIRE(m.tensors.size() == 22);
    uint64_t data_start = 8 + b.header().size(), offset = 0;
    for (size_t i = 0; i < 22; ++i) {
        const TensorInfo& t = m.tensors[i];
        INFO(names[i]);
        CHECK(t.name == std::string("t_") + names[i]);
        CHECK(t.type.name == names[i]);
        CHECK(t.type.id == i);
        CHECK(t.type.known);
        CHECK(t.ne == std::vector<uint64_t>{8});
        CHECK(t.n_elements == 8);
        CHECK(t.n_bytes == bits[i]);  // 8 elements of `bits` bits
        CHECK(t.bits_per_weight() == double(bits[i]));
        CHECK(t.relative_offset == offset);
        CHECK(t.data_offset == data_start + offset);
        CHECK(t.type.block_bytes * 8 == t.type.block_size * bits[i]);
        uint8_t first = 0xFF;
        REQUIRE(m.read_tensor_bytes(i, 0, 1, &first).ok());
        CHECK(first == i);
        offset += bits[i];
    }
    CHECK(offset == 496);
    CHECK(m.tensors[1].type.block_size == 2);  // F4: two elements per byte
    CHECK(m.tensors[2].type.block_size == 4);  // F6: four elements in three bytes
    CHECK(m.tensors[2].type.block_bytes == 3);
}

TEST_CASE("S15 shape products that overflow", "[safetensors]") {
    for (const char* shape : {"[2,18446744073709551614]", "[2,9223372036854775807]"}) {
        INFO(shape);
        std::string h = "{" + st_entry("w", "F32", shape, 0, 16) + "}";
        Model m = require_rejected(safetensors_bytes(h, 16), "ValidationOverflow", "w.shape", header_offset(h, shape));
        CHECK(!m.tensors[0].n_bytes);  // kept, size unknown
    }
}

TEST_CASE("S16 the element count fits but the bit count does not", "[safetensors]") {
    std::string h = "{" + st_entry("w", "F64", "[2305843009213693952]", 0, 16) + "}";
    require_rejected(safetensors_bytes(h, 16), "ValidationOverflow", "w.shape", header_offset(h, "[23"));
}

TEST_CASE("S17 zero-size and rank-0 tensors", "[safetensors]") {
    std::string h = "{" + st_entry("a", "F32", "[2,0]", 0, 0) + "," + st_entry("b", "F16", "[0,0]", 0, 0) + "," +
        st_entry("c", "F32", "[]", 0, 4) + "}";
    Model m = require_accepted(safetensors_bytes(h, 4));
    REQUIRE(m.tensors.size() == 3);
    CHECK(m.tensors[0].n_elements == 0);
    CHECK(m.tensors[0].ne == std::vector<uint64_t>{0, 2});
    CHECK(m.tensors[1].n_bytes == 0u);
    CHECK(m.tensors[2].ne.empty());
    CHECK(m.tensors[2].n_elements == 1);
    CHECK(m.tensors[2].n_bytes == 4u);
}

TEST_CASE("S19 sub-byte dtypes must fill whole bytes", "[safetensors]") {
    std::string f4 = "{" + st_entry("w", "F4", "[3]", 0, 2) + "}";
    require_rejected(safetensors_bytes(f4, 2), "MisalignedSlice", "w.shape", header_offset(f4, "[3]"));
    std::string f6 = "{" + st_entry("w", "F6_E2M3", "[4]", 0, 3) + "}";
    Model m = require_accepted(safetensors_bytes(f6, 3));
    CHECK(m.tensors[0].n_bytes == 3u);
}

TEST_CASE("S20 data_offsets that are not two integers", "[safetensors]") {
    for (const char* offsets : {"[]", "[0]", "[0,4,8]", "null", "{}", "[0,\"8\"]", "\"0,8\""}) {
        INFO(offsets);
        std::string h = std::string("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":") + offsets + "}}";
        uint64_t at = header_offset(h, "\"data_offsets\":") + 15;
        if (std::string(offsets) == "[0,\"8\"]") at += 3;  // the offending element
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "w.data_offsets", at);
    }
}

TEST_CASE("S21 reversed offsets", "[safetensors]") {
    std::string h = "{" + st_entry("w", "F32", "[2]", 8, 0) + "}";
    require_rejected(safetensors_bytes(h, 8), "InvalidOffset", "w.data_offsets", header_offset(h, "[8,0]"));
}

TEST_CASE("S22 the first tensor does not start at 0", "[safetensors]") {
    std::string h = "{" + st_entry("w", "F32", "[2]", 4, 12) + "}";
    Model m = require_rejected(safetensors_bytes(h, 12), "InvalidOffset", "w.data_offsets", header_offset(h, "[4,12]"));
    CHECK(m.tensors.size() == 1);  // complete and in bounds: kept for inspection
}

TEST_CASE("S23 a gap between tensors", "[safetensors]") {
    std::string h = "{" + st_entry("t0", "F32", "[2]", 0, 8) + "," + st_entry("t1", "F32", "[2]", 12, 20) + "}";
    require_rejected(safetensors_bytes(h, 20), "InvalidOffset", "t1.data_offsets", header_offset(h, "[12,20]"));
}

TEST_CASE("S24 overlapping tensors", "[safetensors]") {
    std::string h = "{" + st_entry("t0", "F32", "[2]", 0, 8) + "," + st_entry("t1", "F32", "[2]", 4, 12) + "}";
    require_rejected(safetensors_bytes(h, 12), "InvalidOffset", "t1.data_offsets", header_offset(h, "[4,12]"));
    std::string ten = "{";
    for (int i = 0; i < 10; ++i) ten += (i ? "," : "") + st_entry("t" + std::to_string(i), "F32", "[2,2]", 0, 16);
    ten += "}";
    require_rejected(safetensors_bytes(ten, 16), "InvalidOffset", "t1.data_offsets", header_offset(ten, "[0,16]", 1));
}

TEST_CASE("S25 a range whose length is not the tensor's size", "[safetensors]") {
    std::string h = "{" + st_entry("w", "I32", "[2,2]", 0, 4) + "}";
    require_rejected(safetensors_bytes(h, 4), "TensorInvalidInfo", "w.data_offsets", header_offset(h, "[0,4]"));
}

TEST_CASE("S26 bytes after the last tensor (a ZIP appended to S1)", "[safetensors]") {
    auto bytes = test::s1_bytes();
    const uint8_t zip[22] = {'P', 'K', 5, 6};
    bytes.insert(bytes.end(), zip, zip + sizeof zip);
    Model m = require_rejected(bytes, "MetadataIncompleteBuffer", "data", 72);
    CHECK(m.tensors.size() == 1);
}

TEST_CASE("data missing at the end of the file", "[safetensors]") {
    auto bytes = test::s1_bytes();
    bytes.pop_back();
    require_rejected(bytes, "MetadataIncompleteBuffer", "data", 71);
}

TEST_CASE("S27 header order differs from data order", "[safetensors]") {
    std::string h = "{" + st_entry("b", "F32", "[2]", 8, 16) + "," + st_entry("a", "F32", "[2]", 0, 8) + "}";
    Model m = require_accepted(safetensors_bytes(h, 16));
    REQUIRE(m.tensors.size() == 2);
    CHECK(m.tensors[0].name == "b");  // header order
    CHECK(m.tensors[0].data_offset == 8 + h.size() + 8);
    CHECK(m.tensors[1].data_offset == 8 + h.size());
}

TEST_CASE("S28 duplicate tensor names", "[safetensors]") {
    std::string x = st_entry("a", "F32", "[2]", 0, 8), y = st_entry("a", "F32", "[2]", 8, 16);
    for (std::string h : {"{" + x + "," + x + "}", "{" + x + "," + y + "}"}) {
        INFO(h);
        require_rejected(safetensors_bytes(h, 16), "E_DUPLICATE_KEY", "a", header_offset(h, "\"a\"", 1));
    }
    SECTION("spelled differently, the same decoded key") {
        std::string h = "{" + x + "," + st_entry("\\u0061", "F32", "[2]", 8, 16) + "}";
        require_rejected(safetensors_bytes(h, 16), "E_DUPLICATE_KEY", "a", header_offset(h, "\"\\u0061\""));
    }
    SECTION("inside an entry, and inside an unknown field") {
        std::string h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"dtype\":\"F32\",\"data_offsets\":[0,8]}}";
        require_rejected(safetensors_bytes(h, 8), "E_DUPLICATE_KEY", "w.dtype", header_offset(h, "\"dtype\"", 1));
        std::string deep = "{\"w\":{\"x\":[{\"k\":1,\"k\":2}],\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
        require_rejected(safetensors_bytes(deep, 8), "E_DUPLICATE_KEY", "w.x", header_offset(deep, "\"k\"", 1));
    }
    SECTION("names that differ only after a NUL are different") {
        std::string h = "{" + st_entry("a\\u0000", "F32", "[2]", 0, 8) + "," + st_entry("a", "F32", "[2]", 8, 16) + "}";
        Model m = require_accepted(safetensors_bytes(h, 16));
        CHECK(m.tensors[0].name == std::string("a\0", 2));
    }
}

TEST_CASE("S29 __metadata__ values and placement", "[safetensors]") {
    const std::string w = st_entry("w", "F32", "[2]", 0, 8);
    for (const char* value : {"0", "{}", "[]", "null"}) {
        INFO(value);
        std::string h = std::string("{\"__metadata__\":{\"k\":") + value + "}," + w + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "__metadata__", header_offset(h, "\"k\":") + 4);
    }
    const std::string tensor_shaped = st_entry("x", "F32", "[2]", 0, 8).substr(4);
    for (const std::string& value : {std::string("\"text\""), std::string("[]"), std::string("1"), tensor_shaped}) {
        INFO(value);
        std::string h = "{\"__metadata__\":" + value + "," + w + "}";
        require_rejected(safetensors_bytes(h, 8), "InvalidHeaderDeserialization", "__metadata__",
                         value.front() == '{' ? header_offset(h, "[2]") : header_offset(h, value));
    }
    SECTION("null is accepted") {
        Model m = require_accepted(safetensors_bytes("{\"__metadata__\":null," + w + "}", 8));
        CHECK(m.metadata.empty());
        CHECK(m.tensors.size() == 1);
    }
    SECTION("twice is a duplicate") {
        std::string h = "{\"__metadata__\":{},\"__metadata__\":{}," + w + "}";
        require_rejected(safetensors_bytes(h, 8), "E_DUPLICATE_KEY", "__metadata__", header_offset(h, "\"__metadata__\"", 1));
    }
    SECTION("a key given twice inside it") {
        std::string h = "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}," + w + "}";
        require_rejected(safetensors_bytes(h, 8), "E_DUPLICATE_KEY", "__metadata__", header_offset(h, "\"k\"", 1));
    }
}

TEST_CASE("S30 unusual tensor names are opaque and displayed escaped", "[safetensors]") {
    std::string h = "{" + st_entry("", "F32", "[0]", 0, 0) + "," + st_entry("\\u0000", "F32", "[0]", 0, 0) + "," +
        st_entry("../../x", "F32", "[0]", 0, 0) + "," + st_entry("\xe2\x80\xae\\u0007", "F32", "[0]", 0, 0) + "}";
    Model m = require_accepted(safetensors_bytes(h, 0));
    REQUIRE(m.tensors.size() == 4);
    CHECK(m.tensors[0].name.empty());
    CHECK(m.tensors[1].name == std::string(1, '\0'));
    CHECK(m.tensors[2].name == "../../x");
    CHECK(m.tensors[3].name == "\xe2\x80\xae\a");
    std::string shown = escape_for_display(m.tensors[3].name);
    CHECK(shown.find("\xe2\x80\xae") == std::string::npos);
    CHECK(shown.find('\a') == std::string::npos);
    SECTION("a 1 MiB name") {
        std::string name(1 << 20, 'n');
        std::string big = "{" + st_entry(name, "U8", "[1]", 0, 1) + "}";
        Model b = require_accepted(safetensors_bytes(big, 1));
        CHECK(b.tensors[0].name.size() == (1u << 20));
    }
    SECTION("a hostile name in a field path is escaped and capped") {
        std::string bad = "{" + st_entry("\xe2\x80\xae\\u001b[2J" + std::string(500, 'x'), "F32", "[2]", 0, 4) + "}";
        Model r = read_safetensors(memory_source(safetensors_bytes(bad, 4)));
        REQUIRE(r.error_count() == 1);
        const Diagnostic& d = r.diagnostics.back();
        CHECK(d.code == ErrorCode::TensorInvalidInfo);
        CHECK(d.field.find("\xe2\x80\xae") == std::string::npos);
        CHECK(d.field.find('\x1b') == std::string::npos);
        CHECK(d.field.size() < 200);
    }
}

TEST_CASE("S31 deep nesting is rejected at the depth cap", "[safetensors]") {
    std::string deep(100000, '[');
    SECTION("in an unknown field of a tensor entry") {
        std::string h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"foo\":" + deep + "}}";
        // The object is depth 1, the entry 2, so foo's 127th '[' is depth 129.
        Model m = require_rejected(safetensors_bytes(h, 8), "E_LIMIT", "w.foo", header_offset(h, "[[[") + 126);
        CHECK_THAT(m.diagnostics.back().message, Catch::Contains("max_json_depth=128"));
    }
    SECTION("in a __metadata__ value") {
        std::string h = "{\"__metadata__\":{\"k\":" + deep + "}}";
        require_rejected(safetensors_bytes(h, 0), "InvalidHeaderDeserialization", "__metadata__", header_offset(h, "[[["));
    }
    SECTION("128 levels are fine") {
        std::string ok = "{\"w\":{\"foo\":" + std::string(126, '[') + std::string(126, ']') +
            ",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
        require_accepted(safetensors_bytes(ok, 8), 1);
    }
}
