// malformed-inputs.md B1 "Header and version" (G01-G14), truncation at every byte (G30 and a
// larger file written by our writer), and the path cases X01/X08 for GGUF files.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "diagnostic_checks.h"
#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/text/escape.h"
#include "test_paths.h"
#include "time_limit.h"

using namespace mlens;
using namespace mlens::test;

namespace {

std::vector<uint8_t> prefix(const std::vector<uint8_t>& bytes, size_t n) {
    return std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
}

}  // namespace

TEST_CASE("G01 empty file: E_TRUNCATED magic", "[gguf][malformed]") {
    Model m = read_gguf_bytes({});
    require_error(m, "E_TRUNCATED", "magic", 0);
    CHECK(first_error(m)->message == "need 4 bytes, have 0");
    CHECK(m.partial);
}

TEST_CASE("G02 one to three bytes: E_TRUNCATED magic", "[gguf][malformed]") {
    for (const char* s : {"G", "GG", "GGU"}) {
        INFO(s);
        require_error(read_gguf_bytes(std::vector<uint8_t>(s, s + std::strlen(s))), "E_TRUNCATED", "magic", 0);
    }
}

TEST_CASE("G03 bad magic: E_BAD_MAGIC, legacy magics named, printed as hex", "[gguf][malformed]") {
    struct Case {
        std::string magic;
        bool legacy;
    };
    for (const Case& c :
         {Case{"XXXX", false}, Case{"ggjt", true}, Case{"tjgg", true}, Case{"lmgg", true}, Case{"fmgg", true}, Case{"\x1B[2J", false}}) {
        INFO(hex_bytes(c.magic));
        auto bytes = t1_bytes();
        std::memcpy(bytes.data(), c.magic.data(), 4);
        Model m = read_gguf_bytes(bytes);
        require_error(m, "E_BAD_MAGIC", "magic", 0);
        const std::string& msg = first_error(m)->message;
        CHECK((msg.find("legacy format not supported") != std::string::npos) == c.legacy);
        CHECK(display_safe(first_error(m)->to_line()));
    }
    auto bytes = t1_bytes();
    std::memcpy(bytes.data(), "\x1B[2J", 4);
    CHECK(first_error(read_gguf_bytes(bytes))->message.find("1B 5B 32 4A") != std::string::npos);
}

TEST_CASE("A3 byte-reversed magic FUGG is a bad magic that mentions byte order", "[gguf][malformed]") {
    auto bytes = t1_big_endian_bytes();
    std::memcpy(bytes.data(), "FUGG", 4);
    Model m = read_gguf_bytes(bytes);
    require_error(m, "E_BAD_MAGIC", "magic", 0);
    CHECK(first_error(m)->message.find("byte order") != std::string::npos);
}

TEST_CASE("G04 file ends inside the version: E_TRUNCATED version", "[gguf][malformed]") {
    for (size_t n : {5, 6, 7}) {
        INFO(n);
        require_error(read_gguf_bytes(prefix(t1_bytes(), n)), "E_TRUNCATED", "version", 4);
    }
}

TEST_CASE("G05 version 0: E_BAD_VERSION - other versions E_UNSUPPORTED_VERSION", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    for (uint32_t v : {0u, 4u, 0xFFFFFFFFu, 0x00010000u}) {
        INFO(v);
        std::memcpy(bytes.data() + t1::kVersion, &v, 4);
        require_error(read_gguf_bytes(bytes), v == 0 ? "E_BAD_VERSION" : "E_UNSUPPORTED_VERSION", "version", 4);
    }
}

TEST_CASE("G06 version 1 on a v3-shaped body fails cleanly", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    bytes[t1::kVersion] = 1;
    Model m = read_gguf_bytes(bytes);
    INFO(describe(m));
    REQUIRE(find_diagnostic(m, "W_GGUF_V1") != nullptr);
    // Read with 32-bit counts, n_kv is 0 and the tensor info lands on the KV bytes.
    const Diagnostic* e = first_error(m);
    REQUIRE(e != nullptr);
    CHECK(!e->field.empty());
    CHECK(e->offset.has_value());
}

TEST_CASE("A3 GGUF v1 with 32-bit counts and lengths is read with W_GGUF_V1", "[gguf][malformed]") {
    GgufBuilder b;
    b.text("GGUF").u32(1).u32(1).u32(1);
    b.u32(20).text("general.architecture").u32(8).u32(5).text("llama");
    b.u32(1).text("w").u32(1).u32(32).u32(0).u64(0).pad_to(32).f32_run(32);
    Model m = read_gguf_bytes(b.bytes);
    require_accepted(m, {"W_GGUF_V1"});
    CHECK(m.get_string("general.architecture") == "llama");
    REQUIRE(m.tensors.size() == 1);
    CHECK(m.tensors[0].ne == std::vector<uint64_t>{32});
    CHECK(m.tensors[0].data_offset == 96);
}

TEST_CASE("G07 version 2 with the v3 layout is accepted", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    bytes[t1::kVersion] = 2;
    Model m = read_gguf_bytes(bytes);
    require_accepted(m);
    CHECK(m.files[0].version == 2);
}

TEST_CASE("G08 big-endian T1: W_BIG_ENDIAN and the same keys, tensors and values", "[gguf][malformed]") {
    Model le = read_gguf_bytes(t1_bytes());
    Model be = read_gguf_bytes(t1_big_endian_bytes());
    require_accepted(be, {"W_BIG_ENDIAN"});
    for (const Diagnostic& d : be.diagnostics) CHECK(d.message.find("50331648") == std::string::npos);
    CHECK(be.files[0].big_endian);
    CHECK(be.files[0].version == 3);
    REQUIRE(be.metadata.size() == le.metadata.size());
    CHECK(be.metadata[0].key == le.metadata[0].key);
    CHECK(be.metadata[0].value.type == le.metadata[0].value.type);
    CHECK(be.metadata[0].value.text == le.metadata[0].value.text);
    REQUIRE(be.tensors.size() == 1);
    CHECK(be.tensors[0].name == le.tensors[0].name);
    CHECK(be.tensors[0].ne == le.tensors[0].ne);
    CHECK(be.tensors[0].type.id == le.tensors[0].type.id);
    CHECK(be.tensors[0].data_offset == le.tensors[0].data_offset);
    CHECK(be.tensors[0].n_bytes == le.tensors[0].n_bytes);
    // The file stores big-endian floats 0..31; the tensor's bytes come back in ggml's
    // little-endian layout, so they are the same values as T1's.
    const std::vector<uint8_t> stored = t1_big_endian_bytes();
    CHECK(stored[t1::kData + 4 * 31 + 3] == 0x00);
    CHECK(stored[t1::kData + 4 * 31] == 0x41);
    float values[32];
    REQUIRE(be.read_tensor_bytes(0, 0, 128, values).ok());
    for (int i = 0; i < 32; ++i) CHECK(values[i] == static_cast<float>(i));
    // A read that cuts an element still gives the little-endian bytes.
    uint8_t middle[3];
    REQUIRE(be.read_tensor_bytes(0, 4 * 31 + 1, 3, middle).ok());
    uint8_t expected[4];
    const float thirty_one = 31.0f;
    std::memcpy(expected, &thirty_one, 4);
    CHECK(std::memcmp(middle, expected + 1, 3) == 0);
}

TEST_CASE("G08 big-endian arrays are read element by element byte-swapped", "[gguf][malformed]") {
    GgufBuilder b;
    b.big_endian = true;
    b.header(0, 3).kv_array("a.u16", ValueType::u16, 3).u16(1).u16(0x0203).u16(0xFFFF);
    b.kv_strings("a.names", {"x", "yz"});
    b.kv("a.f64", ValueType::f64).f64(0.5);
    Model m = read_gguf_bytes(b.bytes);
    require_accepted(m, {"W_BIG_ENDIAN"});
    const ArrayIndex& u16s = *m.find("a.u16")->value.array;
    CHECK(u16s.scalar_at(1).as_uint() == 0x0203);
    CHECK(u16s.scalar_at(2).as_uint() == 0xFFFF);
    CHECK(m.find("a.names")->value.array->string_at(1) == "yz");
    CHECK(m.find("a.f64")->value.scalar.as_double() == 0.5);
}

TEST_CASE("G09 file ends inside n_tensors or n_kv", "[gguf][malformed]") {
    for (size_t n : {9, 15}) require_error(read_gguf_bytes(prefix(t1_bytes(), n)), "E_TRUNCATED", "n_tensors", 8);
    for (size_t n : {16, 23}) require_error(read_gguf_bytes(prefix(t1_bytes(), n)), "E_TRUNCATED", "n_kv", 16);
}

TEST_CASE("G10 n_kv = 2^64-1: E_COUNT n_kv before any allocation", "[gguf][malformed]") {
    auto bytes = t1_bytes();
    uint64_t n = UINT64_MAX;
    std::memcpy(bytes.data() + t1::kNKv, &n, 8);
    Model m = read_gguf_bytes(bytes);
    require_error(m, "E_COUNT", "n_kv", 16);
    CHECK(first_error(m)->message == "18446744073709551615 exceeds max possible 16 (232 bytes remaining / 14 bytes per KV)");
    CHECK(m.metadata.empty());
}

TEST_CASE("G11 n_kv = 10^9 in a 64-byte file: E_COUNT n_kv at once", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(0, 1'000'000'000).kv_u8("a", 1).zeros(64 - 38);
    REQUIRE(b.size() == 64);
    CpuStopwatch watch;
    Model m = read_gguf_bytes(b.bytes);
    CHECK(watch.seconds() < 1.0 * kSlowdown);
    require_error(m, "E_COUNT", "n_kv", 16);
    CHECK(first_error(m)->message.find("max possible 2 ") != std::string::npos);
    CHECK(m.metadata.empty());
}

TEST_CASE("G12 n_tensors = 10^9 in a 102-byte file: E_COUNT n_tensors", "[gguf][malformed]") {
    auto bytes = prefix(t1_bytes(), t1::kInfosEnd);
    uint64_t n = 1'000'000'000;
    std::memcpy(bytes.data() + t1::kNTensors, &n, 8);
    CpuStopwatch watch;
    Model m = read_gguf_bytes(bytes);
    CHECK(watch.seconds() < 1.0 * kSlowdown);
    require_error(m, "E_COUNT", "n_tensors", 8);
    CHECK(first_error(m)->message.find("25 bytes per tensor info") != std::string::npos);
    CHECK(m.tensors.empty());
}

// About 2.5 s of parsing in a release build (most of it building 3,000,000 Model entries), so it
// is tagged [slow].
TEST_CASE("G13 3,000,000 real KVs parse in linear time", "[gguf][malformed][slow]") {
    constexpr uint64_t kCount = 3'000'000;
    TempDir dir;
    {
        GgufBuilder b;
        b.bytes.reserve(63u << 20);
        b.header(0, kCount);
        for (uint64_t i = 0; i < kCount; ++i) b.kv_u8("k" + std::to_string(i), static_cast<uint8_t>(i));
        write_whole_file(dir.file("g13.gguf"), b.bytes);
    }
    CpuStopwatch watch;
    auto m = open_gguf(dir.file("g13.gguf"));
    double elapsed = watch.seconds();
    REQUIRE(m.ok());
    require_accepted(*m);
    REQUIRE(m->metadata.size() == kCount);
    CHECK(m->metadata.back().key == "k2999999");
    CHECK(m->metadata.back().value.scalar.bits == (kCount - 1) % 256);
    CHECK(elapsed < 20.0 * kSlowdown);
}

TEST_CASE("G13 a duplicate among many keys is still found", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(0, 100'001);
    for (int i = 0; i < 100'000; ++i) b.kv_u8("k" + std::to_string(i), 0);
    b.kv_u8("k4711", 1);
    Model m = read_gguf_bytes(b.bytes);
    require_error(m, "E_DUPLICATE_KEY", "kv[100000].key", b.size() - 8 - 5 - 4 - 1);
}

TEST_CASE("G14 header-only files are accepted", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(0, 0);
    REQUIRE(b.size() == 24);
    require_accepted(read_gguf_bytes(b.bytes));
    b.zeros(8);
    require_accepted(read_gguf_bytes(b.bytes));
}

TEST_CASE("G30 T1 truncated at every length names the field of the first missing byte", "[gguf][malformed]") {
    struct Row {
        uint64_t from;
        const char* field;
    };
    // T1's fields (B0); each truncation length falls in the last row starting at or before it.
    const Row rows[] = {{0, "magic"},
                        {4, "version"},
                        {8, "n_tensors"},
                        {16, "n_kv"},
                        {24, "kv[0].key"},
                        {32, "kv[0].key"},
                        {52, "kv[0].type"},
                        {56, "kv[0].value"},
                        {64, "kv[0].value"},
                        {69, "tensors[0].name"},
                        {77, "tensors[0].name"},
                        {78, "tensors[0].n_dims"},
                        {82, "tensors[0].ne[0]"},
                        {90, "tensors[0].type"},
                        {94, "tensors[0].offset"}};
    const auto t1 = t1_bytes();
    for (size_t length = 1; length < t1.size(); ++length) {
        INFO("truncated to " << length << " bytes");
        Model m = read_gguf_bytes(prefix(t1, length));
        if (length >= t1::kInfosEnd) {
            require_error(m, "E_TENSOR_OUT_OF_BOUNDS", "tensors[0]", t1::kOffset);
            CHECK(first_error(m)->message == "data range [128, 256) exceeds file size " + std::to_string(length));
            uint8_t byte;
            CHECK(!m.read_tensor_bytes(0, 127, 1, &byte).ok());
            continue;
        }
        const Row* row = &rows[0];
        for (const Row& r : rows)
            if (r.from <= length) row = &r;
        require_error(m, "E_TRUNCATED", row->field, row->from);
        CHECK(m.partial);
    }
}

TEST_CASE("G30 a larger file written by our writer survives truncation at every length", "[gguf][malformed]") {
    GgufBuilder b;
    b.header(6, 16).kv_string("general.architecture", "llama").kv_u32("general.alignment", 64);
    b.kv_u8("t.u8", 7).kv("t.i8", ValueType::i8).u8(0xFE).kv("t.u16", ValueType::u16).u16(65535);
    b.kv("t.i16", ValueType::i16).u16(0x8000).kv("t.i32", ValueType::i32).u32(0xFFFFFFFF);
    b.kv("t.f32", ValueType::f32).f32(1.5f).kv("t.bool", ValueType::boolean).u8(1);
    b.kv("t.u64", ValueType::u64).u64(1ull << 40).kv("t.i64", ValueType::i64).u64(~0ull);
    b.kv("t.f64", ValueType::f64).f64(-0.25);
    b.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "bc", "\xE6\xA8\xA1"});
    b.kv_array("t.floats", ValueType::f32, 4).f32_run(4, 0.5f);
    b.kv_array("t.flags", ValueType::boolean, 3).u8(0).u8(1).u8(0);
    b.kv_array("t.empty", ValueType::u64, 0);
    struct Tensor {
        std::string name;
        std::vector<uint64_t> ne;
        uint32_t type;
        uint64_t bytes;
    };
    const Tensor tensors[] = {
        {"token_embd.weight", {32, 6}, 0, 768},    {"blk.0.attn_q.weight", {64, 2}, 1, 256}, {"blk.0.ffn_up.weight", {32, 2, 2}, 8, 136},
        {"blk.0.ffn_down.weight", {256}, 12, 144}, {"output_norm.weight", {}, 0, 4},         {"empty", {8, 0, 1, 1}, 0, 0}};
    uint64_t offset = 0;
    for (const Tensor& t : tensors) {
        b.tensor_info(t.name, t.ne, t.type, offset);
        offset = (offset + t.bytes + 63) / 64 * 64;
    }
    b.pad_to(64);
    for (uint64_t i = 0; i < offset; ++i) b.u8(static_cast<uint8_t>(i * 37));
    Model source = read_gguf_bytes(b.bytes);
    require_accepted(source);

    TempDir dir;
    REQUIRE(write_gguf(source, dir.file("big.gguf")).ok());
    const auto written = read_whole_file(dir.file("big.gguf"));
    Model whole = read_gguf_bytes(written);
    require_accepted(whole);
    REQUIRE(whole.tensors.size() == 6);
    // Padding after the last tensor is optional and a zero-byte tensor occupies no bytes: a cut
    // after the last data byte leaves a valid file.
    uint64_t data_end = 0;
    for (const TensorInfo& t : whole.tensors)
        if (*t.n_bytes > 0) data_end = std::max(data_end, t.data_range().end());
    for (size_t length = 0; length < written.size(); ++length) {
        INFO("truncated to " << length << " bytes");
        Model m = read_gguf_bytes(prefix(written, length));
        if (length >= data_end) {
            require_accepted(m);
            continue;
        }
        INFO(describe(m));
        REQUIRE(m.error_count() > 0);
        for (const Diagnostic& d : m.diagnostics)
            if (d.severity == Severity::error) {
                CHECK(!d.field.empty());
                REQUIRE(d.offset.has_value());
                CHECK(*d.offset <= length);
            }
        // Whatever is exposed is complete: every tensor either reads whole or fails cleanly, and
        // a tensor whose data was never located (the tensor infos are cut) is never read.
        for (size_t i = 0; i < m.tensors.size(); ++i) {
            const TensorInfo& t = m.tensors[i];
            if (!t.n_bytes || *t.n_bytes == 0) continue;
            std::vector<uint8_t> data(*t.n_bytes);
            const bool located = t.presence != DataPresence::unknown;
            CHECK(located == (length >= whole.files[0].header_bytes));
            CHECK(m.read_tensor_bytes(i, 0, data.size(), data.data()).ok() == (located && t.data_range().end() <= length));
        }
    }
}

TEST_CASE("X01 a model path that is not a regular file is refused before opening", "[gguf][malformed]") {
    TempDir dir;
    REQUIRE(::mkfifo(dir.file("fifo.gguf").c_str(), 0600) == 0);
    REQUIRE(::mkdir(dir.file("dir.gguf").c_str(), 0700) == 0);
    REQUIRE(::symlink("/dev/zero", dir.file("zero.gguf").c_str()) == 0);
    for (const char* name : {"fifo.gguf", "dir.gguf", "zero.gguf"}) {
        INFO(name);
        auto m = open_gguf(dir.file(name));
        REQUIRE(!m.ok());
        CHECK(m.error().code == ErrorCode::E_NOT_REGULAR_FILE);
    }
}

TEST_CASE("X08 T1 at non-ASCII and non-UTF-8 paths opens", "[gguf][malformed]") {
    TempDir dir;
    std::string sub = dir.file(
        "\xC3\xBCn\xC3\xAF"
        "c\xC3\xB8"
        "d\xC3\xA9-\xE6\xA8\xA1\xE5\x9E\x8B");
    REQUIRE(::mkdir(sub.c_str(), 0700) == 0);
    for (const std::string& path : {sub + "/\xD0\xBC\xD0\xBE\xD0\xB4\xD0\xB5\xD0\xBB\xD1\x8C.gguf", dir.file("bad-\xFF\xFE-name.gguf")}) {
        write_whole_file(path, t1_bytes());
        auto m = open_gguf(path);
        REQUIRE(m.ok());
        require_accepted(*m);
        CHECK(m->tensors.size() == 1);
    }
}
