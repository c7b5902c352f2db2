// malformed-inputs.md B1 "Key/value section" (G15-G29), "Alignment" (G31-G35), extreme display
// strings (X02) and caps that name themselves (X09).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "diagnostic_checks.h"
#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/model/summary.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

// T1's second KV starts where T1's tensor info used to.
constexpr uint64_t kKv1 = t1::kNameLength;

void set_u64(std::vector<uint8_t>& bytes, uint64_t at, uint64_t v) { std::memcpy(bytes.data() + at, &v, 8); }
void set_u32(std::vector<uint8_t>& bytes, uint64_t at, uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); }

// Writes `head` and extends the file with zeros (a sparse hole) to `total` bytes.
void write_sparse(const std::string& path, const std::vector<uint8_t>& head, uint64_t total) {
    write_whole_file(path, head);
    REQUIRE(::truncate(path.c_str(), static_cast<off_t>(total)) == 0);
}

}  // namespace

TEST_CASE("G15 key length 2^64-1: E_STRING_LENGTH kv[0].key", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    set_u64(bytes, t1::kKeyLength, UINT64_MAX);
    require_error(read_gguf_bytes(bytes), "E_STRING_LENGTH", "kv[0].key", 24);
}

TEST_CASE("G16 empty key: E_EMPTY_KEY kv[0].key", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    set_u64(bytes, t1::kKeyLength, 0);
    require_error(read_gguf_bytes(bytes), "E_EMPTY_KEY", "kv[0].key", 24);
}

TEST_CASE("G17 key of 70,000 bytes: E_KEY_TOO_LONG kv[0].key", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(1, 1).kv_string(std::string(70'000, 'k'), "llama").tensor_info("w", {32}, 0, 0).pad_to(32).f32_run(32);
    Model m = read_gguf_bytes(b.bytes);
    require_error(m, "E_KEY_TOO_LONG", "kv[0].key", 24);
    CHECK(first_error(m)->message.find("max_key_bytes=65535") != std::string::npos);
}

TEST_CASE("G18 key length one past the end: E_TRUNCATED kv[0].key", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    set_u64(bytes, t1::kKeyLength, 225);
    require_error(read_gguf_bytes(bytes), "E_TRUNCATED", "kv[0].key", 32);
}

TEST_CASE("G19 keys outside [a-z0-9_.]: W_KEY_CHARSET, compared with their length", "[gguf][malformed]") {
    const std::string keys[] = {"general.\xC3\x28", "general.\x1B[31mred", std::string("general.architecture\0x", 22), "General.Name",
                                "general.my key"};
    for (const std::string& key : keys) {
        INFO(escape_for_display(key));
        Model m = read_gguf_bytes(t1_plus_kvs(1, [&](GgufBuilder& b) { b.kv_u8(key, 1); }));
        require_accepted(m, {"W_KEY_CHARSET"});
        require_warning(m, "W_KEY_CHARSET", "kv[1].key", kKv1);
        REQUIRE(m.metadata.size() == 2);
        CHECK(m.metadata[1].key == key);
        CHECK(m.find(key) == &m.metadata[1]);
        CHECK(m.get_string("general.architecture") == "llama");
        for (const Diagnostic& d : m.diagnostics) CHECK(display_safe(d.to_line()));
    }
}

TEST_CASE("G20 duplicate key: E_DUPLICATE_KEY at the second key, never last-wins", "[gguf][malformed]") {
    Model m = read_gguf_bytes(t1_plus_kvs(1, [](GgufBuilder& b) { b.kv_string("general.architecture", "gpt2"); }));
    require_error(m, "E_DUPLICATE_KEY", "kv[1].key", kKv1);
    CHECK(first_error(m)->message.find("\"general.architecture\"") != std::string::npos);
    CHECK(m.get_string("general.architecture") == "llama");
}

TEST_CASE("G20 general.alignment given twice is a duplicate too", "[gguf][malformed]") {
    Model m = read_gguf_bytes(t1_plus_kvs(2, [](GgufBuilder& b) { b.kv_u32("general.alignment", 32).kv_u32("general.alignment", 64); }));
    require_error(m, "E_DUPLICATE_KEY", "kv[2].key", kKv1 + 8 + 17 + 4 + 4);
}

TEST_CASE("G21 value type out of range: E_VALUE_TYPE kv[0].type", "[gguf][malformed]") {
    for (uint32_t type : {13u, 0xFFFFFFFFu, 0x80000000u}) {
        INFO(type);
        auto bytes = t1_bytes();
        set_u32(bytes, t1::kKvType, type);
        require_error(read_gguf_bytes(bytes), "E_VALUE_TYPE", "kv[0].type", 52);
    }
}

TEST_CASE("G21 array element type out of range: E_VALUE_TYPE kv[1].array.type", "[gguf][malformed]") {
    Model m = read_gguf_bytes(t1_plus_kvs(1, [](GgufBuilder& b) { b.kv("test.bad", ValueType::array).u32(13).u64(1).u8(0); }));
    require_error(m, "E_VALUE_TYPE", "kv[1].array.type", kKv1 + 8 + 8 + 4);
}

TEST_CASE("G22 array of arrays: E_NESTED_ARRAY at the element type", "[gguf][malformed]") {
    Model m =
        read_gguf_bytes(t1_plus_kvs(1, [](GgufBuilder& b) { b.kv_array("test.nested", ValueType::array, 1).u32(0).u64(2).u8(1).u8(2); }));
    require_error(m, "E_NESTED_ARRAY", "kv[1]", kKv1 + 8 + 11 + 4);
    CHECK(m.metadata.size() == 1);
}

TEST_CASE("G23 array count 2^64-1 in a 49-byte file: E_ARRAY_LENGTH", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(0, 1).kv_array("a", ValueType::u8, UINT64_MAX);
    REQUIRE(b.size() == 49);
    Model m = read_gguf_bytes(b.bytes);
    require_error(m, "E_ARRAY_LENGTH", "kv[0].value", 41);
    CHECK(first_error(m)->message == "count 18446744073709551615 × 1 bytes > 0 bytes remaining");
}

TEST_CASE("G24 string array of 10^9 elements: E_ARRAY_LENGTH (8 bytes per element)", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(0, 1).kv_array("a", ValueType::string, 1'000'000'000).str("a").str("b");
    Model m = read_gguf_bytes(b.bytes);
    require_error(m, "E_ARRAY_LENGTH", "kv[0].value", 41);
    CHECK(first_error(m)->message.find("× 8 bytes") != std::string::npos);
}

TEST_CASE("G25 string element #2 of length 2^64-1: E_STRING_LENGTH kv[0].value[2]", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(0, 1).kv_array("a", ValueType::string, 3).str("a").str("b").u64(UINT64_MAX);
    Model m = read_gguf_bytes(b.bytes);
    require_error(m, "E_STRING_LENGTH", "kv[0].value[2]", 49 + 9 + 9);
    CHECK(m.metadata.empty());
}

TEST_CASE("G26 array with count 0 is accepted", "[gguf][malformed]") {
    Model m = read_gguf_bytes(t1_plus_kvs(1, [](GgufBuilder& b) { b.kv_array("test.empty", ValueType::u8, 0); }));
    require_accepted(m);
    CHECK(m.find("test.empty")->value.array->count == 0);
    CHECK(format_value(m.find("test.empty")->value) == "[UINT8 × 0]");
}

TEST_CASE("G27 hostile string values are accepted and displayed escaped", "[gguf][malformed]") {
    struct Case {
        std::string value;
        std::vector<std::string> warnings;
    };
    const Case cases[] = {
        {"\xC3\x28\xFF\xFE", {"W_INVALID_UTF8"}},
        {std::string("a\0b\0\0c", 6), {}},
        {"\xE2\x80\xAEgnp.exe", {}},
        {"\x1B]0;pwned\x07\x1B[2J", {}},
        {std::string(10u << 20, 'x') + "\x1B[2J\xE2\x80\xAE", {}},
    };
    for (const Case& c : cases) {
        INFO(escape_for_display(c.value, 40));
        Model m = read_gguf_bytes(t1_plus_kvs(1, [&](GgufBuilder& b) { b.kv_string("general.name", c.value); }));
        require_accepted(m, c.warnings);
        const Value& v = m.find("general.name")->value;
        REQUIRE(v.string_length() == c.value.size());
        CHECK(v.string_value() == c.value);
        CHECK(display_safe(format_value(v)));
        CHECK(display_safe(escape_for_display(v.string_value())));
        CHECK(format_value(v).size() < 1000);
        CHECK(display_safe(escape_for_display(summarize(m).name)));
        for (const Diagnostic& d : m.diagnostics) CHECK(display_safe(d.to_line()));
    }
}

TEST_CASE("G27 a 10 MiB string stays in the file as a lazy view", "[gguf][malformed]") {
    Model m = read_gguf_bytes(t1_plus_kvs(1, [](GgufBuilder& b) { b.kv_string("general.name", std::string(10u << 20, 'y')); }));
    require_accepted(m);
    const Value& v = m.find("general.name")->value;
    REQUIRE(v.lazy_text.has_value());
    CHECK(v.text.empty());
    CHECK(v.string_value(5) == "yyyyy");
}

TEST_CASE("G28 BOOL bytes other than 0/1: W_BOOL_NOT_01 showing the raw byte", "[gguf][malformed]") {
    for (uint8_t byte : {uint8_t{2}, uint8_t{0xFF}}) {
        Model m = read_gguf_bytes(t1_plus_kvs(1, [&](GgufBuilder& b) { b.kv("test.flag", ValueType::boolean).u8(byte); }));
        require_accepted(m, {"W_BOOL_NOT_01"});
        require_warning(m, "W_BOOL_NOT_01", "kv[1].value", kKv1 + 8 + 9 + 4);
        CHECK(format_value(m.find("test.flag")->value) == "true (raw " + std::to_string(byte) + ")");
    }
    Model arr = read_gguf_bytes(t1_plus_kvs(1, [](GgufBuilder& b) { b.kv_array("test.flags", ValueType::boolean, 3).u8(0).u8(1).u8(7); }));
    require_accepted(arr, {"W_BOOL_NOT_01"});
    require_warning(arr, "W_BOOL_NOT_01", "kv[1].value[2]", kKv1 + 8 + 10 + 4 + 4 + 8 + 2);
}

TEST_CASE("G29 NaN, infinities and subnormals are accepted and convert safely", "[gguf][malformed]") {
    const float nan32 = std::numeric_limits<float>::quiet_NaN(), inf32 = std::numeric_limits<float>::infinity();
    const double sub64 = std::numeric_limits<double>::denorm_min();
    Model m = read_gguf_bytes(t1_plus_kvs(7, [&](GgufBuilder& b) {
        b.kv("llama.rope.freq_base", ValueType::f32).f32(nan32);
        b.kv("llama.attention.layer_norm_rms_epsilon", ValueType::f32).f32(std::numeric_limits<float>::denorm_min());
        b.kv("llama.rope.scaling.factor", ValueType::f32).f32(-inf32);
        b.kv("test.f64_nan", ValueType::f64).f64(std::numeric_limits<double>::quiet_NaN());
        b.kv("test.f64_inf", ValueType::f64).f64(std::numeric_limits<double>::infinity());
        b.kv("test.f64_sub", ValueType::f64).f64(sub64);
        b.kv_array("test.f32s", ValueType::f32, 3).f32(nan32).f32(inf32).f32(-inf32);
    }));
    require_accepted(m);
    for (const MetadataEntry& e : m.metadata) {
        if (e.value.is_string()) continue;
        const Scalar s = e.value.is_array() ? e.value.array->scalar_at(0) : e.value.scalar;
        INFO(e.key << " = " << s.to_string());
        (void)s.as_int();
        (void)s.as_uint();
        CHECK(!format_value(e.value).empty());
    }
    CHECK(m.find("llama.rope.freq_base")->value.scalar.as_int() == 0);
    CHECK(m.find("llama.rope.scaling.factor")->value.scalar.as_int() == std::numeric_limits<int64_t>::min());
    CHECK(m.find("test.f64_inf")->value.scalar.as_uint() == static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
    CHECK(m.find("test.f64_sub")->value.scalar.as_double() == sub64);
    CHECK(std::isnan(m.find("test.f64_nan")->value.scalar.as_double()));
    (void)summarize(m);
}

TEST_CASE("G31 general.alignment not UINT32: E_ALIGNMENT_TYPE naming the type", "[gguf][malformed]") {
    const uint64_t type_at = kKv1 + 8 + 17;
    struct Case {
        const char* type;
        std::function<void(GgufBuilder&)> write;
    };
    const Case cases[] = {
        {"INT32", [](GgufBuilder& b) { b.kv("general.alignment", ValueType::i32).u32(32); }},
        {"UINT64", [](GgufBuilder& b) { b.kv("general.alignment", ValueType::u64).u64(32); }},
        {"STRING", [](GgufBuilder& b) { b.kv_string("general.alignment", "32"); }},
    };
    for (const Case& c : cases) {
        INFO(c.type);
        Model m = read_gguf_bytes(t1_plus_kvs(1, c.write));
        require_error(m, "E_ALIGNMENT_TYPE", "general.alignment", type_at);
        CHECK(first_error(m)->message.find(c.type) != std::string::npos);
    }
}

TEST_CASE("G32/G33 alignment 0 or not a power of two: E_ALIGNMENT", "[gguf][malformed]") {
    const uint64_t value_at = kKv1 + 8 + 17 + 4;
    for (uint32_t a : {0u, 13u}) {
        INFO(a);
        Model m = read_gguf_bytes(t1_plus_kvs(1, [&](GgufBuilder& b) { b.kv_u32("general.alignment", a); }));
        require_error(m, "E_ALIGNMENT", "general.alignment", value_at);
        CHECK(first_error(m)->message.find("not a power of two") != std::string::npos);
    }
    Model big = read_gguf_bytes(t1_plus_kvs(1, [](GgufBuilder& b) { b.kv_u32("general.alignment", 2u << 20); }));
    require_error(big, "E_ALIGNMENT_TOO_LARGE", "general.alignment", value_at);
    CHECK(first_error(big)->message.find("max_alignment=1048576") != std::string::npos);
}

TEST_CASE("G34 alignment 1 with no padding is accepted with a warning", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(1, 2).kv_string("general.architecture", "llama").kv_u32("general.alignment", 1);
    b.tensor_info("w", {3}, 0, 0).f32_run(3);
    Model m = read_gguf_bytes(b.bytes);
    require_accepted(m, {"W_ALIGNMENT"});
    CHECK(find_diagnostic(m, "W_ALIGNMENT")->message.find("multiple of 8") != std::string::npos);
    CHECK(m.tensors[0].data_offset == b.size() - 12);
}

TEST_CASE("G35 alignment 64 with non-zero padding: W_PADDING_NONZERO", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(1, 2).kv_string("general.architecture", "llama").kv_u32("general.alignment", 64);
    b.tensor_info("w", {32}, 0, 0);
    const uint64_t header_end = b.size();
    b.pad_to(64, 0xAA).f32_run(32);
    Model m = read_gguf_bytes(b.bytes);
    require_accepted(m, {"W_PADDING_NONZERO"});
    require_warning(m, "W_PADDING_NONZERO", "padding", header_end);
    CHECK(m.tensors[0].data_offset == 192);
}

TEST_CASE("X02 a string array of 1,000,000 entries is accepted and rendered lazily", "[gguf][malformed]") {
    auto start = std::chrono::steady_clock::now();
    std::vector<std::string> tokens;
    for (int i = 0; i < 1'000'000; ++i) tokens.push_back("tok" + std::to_string(i));
    Model m = read_gguf_bytes(t1_plus_kvs(1, [&](GgufBuilder& b) { b.kv_strings("test.tokens", tokens); }));
    require_accepted(m);
    const ArrayIndex& a = *m.find("test.tokens")->value.array;
    CHECK(a.count == 1'000'000);
    CHECK(a.string_at(999'999) == "tok999999");
    CHECK(format_value(m.find("test.tokens")->value) == "[STRING × 1000000] tok0, tok1, tok2, tok3, tok4, tok5, tok6, tok7, …");
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 20.0);
}

TEST_CASE("X09 caps name themselves: max_array_elements and max_string_bytes", "[gguf][malformed]") {
    TempDir dir;
    const uint64_t array_count = (64ull << 20) + 1;
    GgufBuilder arr;
    arr.header(0, 1).kv_array("test.big", ValueType::u8, array_count);
    write_sparse(dir.file("array.gguf"), arr.bytes, arr.size() + array_count);
    auto m = open_gguf(dir.file("array.gguf"));
    REQUIRE(m.ok());
    require_error(*m, "E_LIMIT", "kv[0].value", 8 + 8 + 8 + 8 + 8 + 4 + 4);
    CHECK(first_error(*m)->message.find("max_array_elements=67108864") != std::string::npos);

    const uint64_t string_bytes = (64ull << 20) + 1;
    GgufBuilder str;
    str.header(0, 1).kv("test.big", ValueType::string).u64(string_bytes);
    write_sparse(dir.file("string.gguf"), str.bytes, str.size() + string_bytes);
    m = open_gguf(dir.file("string.gguf"));
    REQUIRE(m.ok());
    require_error(*m, "E_LIMIT", "kv[0].value", 8 + 8 + 8 + 8 + 8 + 4);
    CHECK(first_error(*m)->message.find("max_string_bytes=67108864") != std::string::npos);

    // Just under the cap, the string stays in the file.
    GgufBuilder under;
    under.header(0, 1).kv("test.big", ValueType::string).u64(string_bytes - 1);
    write_sparse(dir.file("under.gguf"), under.bytes, under.size() + string_bytes - 1);
    m = open_gguf(dir.file("under.gguf"));
    REQUIRE(m.ok());
    require_accepted(*m);
    CHECK(m->find("test.big")->value.lazy_text.has_value());
}

TEST_CASE("X10 a header of more than 2^19 tensor infos is E_LIMIT before any is read", "[gguf][malformed]") {
    // The count fits in the file's bytes (sparse zeros), but read they would take gigabytes.
    TempDir dir;
    const uint64_t count = (1ull << 19) + 1;
    GgufBuilder tensors;
    tensors.header(count, 0);
    write_sparse(dir.file("tensors.gguf"), tensors.bytes, tensors.size() + count * 32);
    auto m = open_gguf(dir.file("tensors.gguf"));
    REQUIRE(m.ok());
    require_error(*m, "E_LIMIT", "n_tensors", 8);
    CHECK(first_error(*m)->message == "524289 exceeds limit max_tensors=524288");
    CHECK(m->tensors.empty());
    CHECK(m->files.front().version == 3);  // the version read, though the count stopped the open
}
