// malformed-inputs.md B1 "Tensor info" (G36-G56) and hostile tensor names (X02).
#include <catch2/catch.hpp>

#include <cstring>

#include "diagnostic_checks.h"
#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/text/escape.h"

using namespace mlens;
using namespace mlens::test;

namespace {

struct TensorSpec {
    std::string name;
    std::vector<uint64_t> ne;
    uint32_t type = 0;
    uint64_t offset = 0;
};

constexpr uint32_t kF32 = 0, kQ4_0 = 2, kQ8_0 = 8, kI64 = 27;

// general.architecture, then the tensor infos (the first at offset 69, as in T1), padding to 32
// and `data_bytes` bytes of data.
std::vector<uint8_t> tensors_file(const std::vector<TensorSpec>& tensors, uint64_t data_bytes) {
    GgufBuilder b;
    b.header(tensors.size(), 1).kv_string("general.architecture", "llama");
    for (const TensorSpec& t : tensors) b.tensor_info(t.name, t.ne, t.type, t.offset);
    b.pad_to(32);
    for (uint64_t i = 0; i < data_bytes; ++i) b.u8(static_cast<uint8_t>(i));
    return b.bytes;
}

// Offset of the info of tensors[i] when every earlier info has a 1-dim shape and the given names.
uint64_t offset_field_of(const std::vector<TensorSpec>& tensors, size_t i) {
    uint64_t at = t1::kNameLength;
    for (size_t k = 0; k <= i; ++k) {
        at += 8 + tensors[k].name.size() + 4 + 8 * tensors[k].ne.size() + 4;
        if (k < i) at += 8;
    }
    return at;
}

}  // namespace

TEST_CASE("G36 tensor name length 2^64-1: E_STRING_LENGTH tensors[0].name", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    uint64_t n = UINT64_MAX;
    std::memcpy(bytes.data() + t1::kNameLength, &n, 8);
    require_error(read_gguf_bytes(bytes), "E_STRING_LENGTH", "tensors[0].name", 69);
}

TEST_CASE("G37 tensor names of 64, 65 and 100 bytes", "[gguf][malformed]") {
    const std::string base = "my_tensor_0_with_a_very_long_name_";
    auto name_of = [&](size_t n) { return (base + std::string(n, 'x')).substr(0, n); };
    Model ok = read_gguf_bytes(tensors_file({{name_of(64), {32}}}, 128));
    require_accepted(ok, {"W_TENSOR_NAME_LENGTH"});
    require_warning(ok, "W_TENSOR_NAME_LENGTH", "tensors[0].name", 69);
    for (size_t n : {65, 100}) {
        INFO(n);
        Model m = read_gguf_bytes(tensors_file({{name_of(n), {32}}}, 128));
        require_error(m, "E_TENSOR_NAME_TOO_LONG", "tensors[0].name", 69);
        CHECK(first_error(m)->message.find("max_tensor_name_bytes=64") != std::string::npos);
    }
}

TEST_CASE("G38 empty tensor name: accepted with a warning, distinct from not found", "[gguf][malformed]") {
    Model m = read_gguf_bytes(tensors_file({{"", {32}}}, 128));
    require_accepted(m, {"W_EMPTY_TENSOR_NAME"});
    require_warning(m, "W_EMPTY_TENSOR_NAME", "tensors[0].name", 69);
    CHECK(m.find_tensor("") == &m.tensors[0]);
    CHECK(m.find_tensor("w") == nullptr);
}

TEST_CASE("G39 duplicate tensor names: E_DUPLICATE_TENSOR at the second name", "[gguf][malformed]") {
    std::vector<TensorSpec> t = {{"w", {32}, kF32, 0}, {"w", {32}, kF32, 128}};
    Model m = read_gguf_bytes(tensors_file(t, 256));
    require_error(m, "E_DUPLICATE_TENSOR", "tensors[1].name", 69 + 33);
    CHECK(first_error(m)->message.find("\"w\"") != std::string::npos);
}

TEST_CASE("G40 path-like tensor names are accepted as opaque names", "[gguf][malformed]") {
    const std::string names[] = {"../../etc/passwd", "C:\\x", "a/../../b", std::string("x\0y", 3)};
    std::vector<TensorSpec> t;
    for (size_t i = 0; i < 4; ++i) t.push_back({names[i], {8}, kF32, 32 * i});
    Model m = read_gguf_bytes(tensors_file(t, 128));
    require_accepted(m);
    for (size_t i = 0; i < 4; ++i) CHECK(m.tensors[i].name == names[i]);
    CHECK(m.find_tensor("x") == nullptr);
    CHECK(escape_for_display(m.tensors[3].name) == "x\\x00y");
}

TEST_CASE("G41 n_dims = 0 is a one-element scalar", "[gguf][malformed]") {
    for (uint64_t data : {32, 4}) {
        INFO(data);
        Model m = read_gguf_bytes(tensors_file({{"s", {}}}, data));
        require_accepted(m);
        CHECK(m.tensors[0].n_elements == 1);
        CHECK(m.tensors[0].n_bytes == 4u);
    }
}

TEST_CASE("A3 more than 4 dimensions: E_DIMS tensors[0].n_dims", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    bytes[t1::kNDims] = 5;
    require_error(read_gguf_bytes(bytes), "E_DIMS", "tensors[0].n_dims", 78);
}

TEST_CASE("G42 ne[0] = 2^64-1: E_DIM_RANGE tensors[0].ne[0]", "[gguf][malformed]") {
    Model m = read_gguf_bytes(tensors_file({{"w", {UINT64_MAX}}}, 128));
    require_error(m, "E_DIM_RANGE", "tensors[0].ne[0]", 82);
}

TEST_CASE("G43 zero-element tensors may share the end-of-data offset", "[gguf][malformed]") {
    std::vector<TensorSpec> t = {{"w", {32}, kF32, 0}, {"z", {32, 0}, kF32, 128}, {"z2", {0}, kF32, 128}};
    Model m = read_gguf_bytes(tensors_file(t, 128));
    require_accepted(m);
    CHECK(m.tensors[1].n_elements == 0);
    CHECK(m.tensors[1].n_bytes == 0u);
    CHECK(m.tensors[2].n_bytes == 0u);
    CHECK(m.tensors[2].bits_per_weight() == 0.0);
}

TEST_CASE("A3 a zero-byte tensor is in bounds at any aligned offset", "[gguf][malformed]") {
    std::vector<TensorSpec> t = {{"w", {32}, kF32, 0}, {"z", {0}, kF32, 1ull << 40}};
    Model m = read_gguf_bytes(tensors_file(t, 128));
    require_accepted(m, {"W_NONCANONICAL_LAYOUT"});
}

TEST_CASE("G44 element count overflow: E_ELEMENT_OVERFLOW tensors[0].ne", "[gguf][malformed]") {
    const uint64_t big = 4ull * INT32_MAX;
    Model m = read_gguf_bytes(tensors_file({{"w", {big, big}}}, 128));
    require_error(m, "E_ELEMENT_OVERFLOW", "tensors[0].ne", 82);
}

TEST_CASE("G45 byte size over 2^64: E_BYTE_SIZE_OVERFLOW tensors[0]", "[gguf][malformed]") {
    Model m = read_gguf_bytes(tensors_file({{"w", {1ull << 62}, kI64}}, 128));
    require_error(m, "E_BYTE_SIZE_OVERFLOW", "tensors[0]", 69);
}

TEST_CASE("G46 Q8_0 sizes that wrap in multiply-then-divide are never small", "[gguf][malformed]") {
    // m with 17·m ≡ 2 (mod 2^58), so 32·m·34 ≡ 128 (mod 2^64).
    uint64_t inverse17 = 17;
    for (int i = 0; i < 6; ++i) inverse17 *= 2 - 17 * inverse17;
    const uint64_t m = (2 * inverse17) & ((1ull << 58) - 1);
    const uint64_t ne0 = 32 * m;
    REQUIRE(ne0 * 34 == 128);
    REQUIRE(ne0 < (1ull << 63));
    Model a = read_gguf_bytes(tensors_file({{"w", {ne0}, kQ8_0}}, 128));
    require_error(a, "E_TENSOR_OUT_OF_BOUNDS", "tensors[0]", 94);
    REQUIRE(a.tensors.size() == 1);
    CHECK(a.tensors[0].n_bytes == m * 34);
    CHECK(first_error(a)->message == "data range [128, " + std::to_string(128 + m * 34) + ") exceeds file size 256");

    Model b = read_gguf_bytes(tensors_file({{"w", {1ull << 62, 4}, kQ8_0}}, 128));
    require_error(b, "E_ELEMENT_OVERFLOW", "tensors[0].ne", 82);
}

TEST_CASE("G47 Q4_0 with ne[0] = 33: E_BLOCK_MISALIGNED tensors[0].ne[0]", "[gguf][malformed]") {
    Model m = read_gguf_bytes(tensors_file({{"w", {33}, kQ4_0}}, 128));
    require_error(m, "E_BLOCK_MISALIGNED", "tensors[0].ne[0]", 82);
}

TEST_CASE("G48 unknown and removed tensor types keep the file open", "[gguf][malformed]") {
    for (uint32_t type : {43u, 44u, 4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
        INFO(type);
        auto bytes = t1_bytes();
        std::memcpy(bytes.data() + t1::kType, &type, 4);
        Model m = read_gguf_bytes(bytes);
        require_accepted(m, {"W_UNKNOWN_TENSOR_TYPE"});
        require_warning(m, "W_UNKNOWN_TENSOR_TYPE", "tensors[0].type", 90);
        const TensorInfo& t = m.tensors[0];
        CHECK(!t.type.known);
        CHECK(t.type.id == type);
        CHECK(t.type.name == "unknown(" + std::to_string(type) + ")");
        CHECK(!t.n_bytes.has_value());
    }
    for (uint32_t type : {0xFFFFFFFFu, 0x80000000u}) {
        INFO(type);
        auto bytes = t1_bytes();
        std::memcpy(bytes.data() + t1::kType, &type, 4);
        require_error(read_gguf_bytes(bytes), "E_TENSOR_TYPE", "tensors[0].type", 90);
    }
}

TEST_CASE("A3 an unknown-type tensor cannot start past the end of the file", "[gguf][malformed]") {
    Model m = read_gguf_bytes(tensors_file({{"w", {32}, 43, 4096}}, 128));
    require_error(m, "E_TENSOR_OUT_OF_BOUNDS", "tensors[0]", 94);
}

TEST_CASE("G49 tensor offset 2^64-1: E_TENSOR_OFFSET tensors[0].offset", "[gguf][malformed]") {
    Model m = read_gguf_bytes(tensors_file({{"w", {32}, kF32, UINT64_MAX}}, 128));
    require_error(m, "E_TENSOR_OFFSET", "tensors[0].offset", 94);
}

TEST_CASE("G50 tensor offset 1 with alignment 32: E_TENSOR_MISALIGNED", "[gguf][malformed]") {
    Model m = read_gguf_bytes(tensors_file({{"w", {32}, kF32, 1}}, 160));
    require_error(m, "E_TENSOR_MISALIGNED", "tensors[0].offset", 94);
}

TEST_CASE("G51 data far past the end: E_TENSOR_OUT_OF_BOUNDS at open", "[gguf][malformed]") {
    Model m = read_gguf_bytes(tensors_file({{"w", {1'000'000}}}, 128));
    require_error(m, "E_TENSOR_OUT_OF_BOUNDS", "tensors[0]", 94);
    CHECK(first_error(m)->to_line() ==
          "error: GGUF E_TENSOR_OUT_OF_BOUNDS tensors[0] offset=94: data range [128, 4000128) exceeds file size 256");
}

TEST_CASE("G52 offsets laid out with alignment 1 under alignment 32: E_TENSOR_MISALIGNED", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(2, 2).kv_string("general.architecture", "llama").kv_u32("general.alignment", 32);
    b.tensor_info("a", {3}, kF32, 0);
    b.tensor_info("b", {8}, kF32, 12);
    const uint64_t b_offset_field = b.size() - 8;
    b.pad_to(32).zeros(12 + 32);
    Model m = read_gguf_bytes(b.bytes);
    require_error(m, "E_TENSOR_MISALIGNED", "tensors[1].offset", b_offset_field);
}

TEST_CASE("G53 valid non-canonical layouts: W_NONCANONICAL_LAYOUT", "[gguf][malformed]") {
    std::vector<TensorSpec> reversed = {{"a", {32}, kF32, 128}, {"b", {32}, kF32, 0}};
    Model r = read_gguf_bytes(tensors_file(reversed, 256));
    require_accepted(r, {"W_NONCANONICAL_LAYOUT"});
    require_warning(r, "W_NONCANONICAL_LAYOUT", "tensors[0].offset", offset_field_of(reversed, 0));

    std::vector<TensorSpec> gap = {{"a", {32}, kF32, 0}, {"b", {32}, kF32, 192}};
    Model g = read_gguf_bytes(tensors_file(gap, 320));
    require_accepted(g, {"W_NONCANONICAL_LAYOUT"});
    require_warning(g, "W_NONCANONICAL_LAYOUT", "tensors[1].offset", offset_field_of(gap, 1));
    CHECK(find_diagnostic(g, "W_NONCANONICAL_LAYOUT")->tensor == std::optional<uint64_t>{1});
}

TEST_CASE("A3 overlapping tensor data: E_TENSOR_OVERLAP for every overlapping tensor", "[gguf][malformed]") {
    // b and c both lie inside a; c does not touch b.
    std::vector<TensorSpec> t = {{"a", {64}, kF32, 0}, {"b", {8}, kF32, 32}, {"c", {8}, kF32, 128}};
    Model m = read_gguf_bytes(tensors_file(t, 256));
    INFO(describe(m));
    require_error(m, "E_TENSOR_OVERLAP", "tensors[1]", offset_field_of(t, 1));
    CHECK(first_error(m)->message == "data range [224, 256) overlaps tensors[0] at [192, 448)");
    // Both overlapping tensors, each also named by its index in the model.
    std::vector<uint64_t> overlapping;
    for (const Diagnostic& d : m.diagnostics)
        if (d.code == ErrorCode::E_TENSOR_OVERLAP) overlapping.push_back(d.tensor.value_or(UINT64_MAX));
    CHECK(overlapping == std::vector<uint64_t>{1, 2});
}

TEST_CASE("G54 data one byte short: E_TENSOR_OUT_OF_BOUNDS tensors[1], nothing half-read", "[gguf][malformed]") {
    std::vector<TensorSpec> t = {{"a", {32}, kF32, 0}, {"b", {32}, kF32, 128}};
    Model m = read_gguf_bytes(tensors_file(t, 255));
    require_error(m, "E_TENSOR_OUT_OF_BOUNDS", "tensors[1]", offset_field_of(t, 1));
    CHECK(m.error_count() == 1);
    CHECK(find_diagnostic(m, "W_TRAILING_DATA") == nullptr);
    std::vector<uint8_t> data(128);
    CHECK(m.read_tensor_bytes(0, 0, 128, data.data()).ok());
    CHECK(!m.read_tensor_bytes(1, 0, 128, data.data()).ok());
}

TEST_CASE("G55 file ends right after the tensor infos: E_TENSOR_OUT_OF_BOUNDS", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    bytes.resize(t1::kInfosEnd);
    require_error(read_gguf_bytes(bytes), "E_TENSOR_OUT_OF_BOUNDS", "tensors[0]", 94);
}

TEST_CASE("G56 bytes after the last tensor: W_TRAILING_DATA with the count", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    const uint8_t empty_zip[22] = {'P', 'K', 5, 6};
    bytes.insert(bytes.end(), empty_zip, empty_zip + sizeof empty_zip);
    Model m = read_gguf_bytes(bytes);
    require_accepted(m, {"W_TRAILING_DATA"});
    CHECK(find_diagnostic(m, "W_TRAILING_DATA")->to_line() == "warning: GGUF W_TRAILING_DATA offset=256: 22 bytes after the last tensor");
}

TEST_CASE("X02 tensor names with bidi overrides and terminal escapes are displayed escaped", "[gguf][malformed]") {
    std::vector<TensorSpec> t = {{"\xE2\x80\xAEgnp.exe", {8}, kF32, 0}, {"\x1B[2Jclear", {8}, kF32, 32}};
    Model m = read_gguf_bytes(tensors_file(t, 64));
    require_accepted(m);
    for (const TensorInfo& ti : m.tensors) {
        std::string shown = escape_for_display(ti.name);
        CHECK(display_safe(shown));
        CHECK(!display_safe(ti.name));
    }
    CHECK(escape_for_display(m.tensors[0].name) == "\\u202Egnp.exe");
}
