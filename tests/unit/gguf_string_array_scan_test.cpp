// The reader's scan of STRING arrays (vocabularies): every element's offset, the first element
// that is not valid UTF-8, and the first element that fails its key's check are found wherever
// the elements fall relative to the reader's window, in both byte orders and in GGUF v1.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "diagnostic_checks.h"
#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/io/cursor.h"
#include "mlens/text/utf8.h"

using namespace mlens;
using namespace mlens::test;

namespace {

struct ArrayFile {
    std::vector<uint8_t> bytes;
    uint64_t key_at = 0;  // where the KV starts (its key's length field)
    std::vector<uint64_t> offsets;  // of each element's length field
};

// One KV: `key` holding `elements`, as GGUF v3 (either byte order) or v1 (32-bit lengths).
ArrayFile string_array_file(const std::string& key, const std::vector<std::string>& elements, bool big_endian = false,
                            uint32_t version = 3) {
    GgufBuilder b;
    b.big_endian = big_endian;
    ArrayFile file;
    auto length = [&](uint64_t n) { version == 1 ? b.u32(static_cast<uint32_t>(n)) : b.u64(n); };
    b.text("GGUF").u32(version);
    length(0);
    length(1);
    file.key_at = b.size();
    length(key.size());
    b.text(key).u32(static_cast<uint32_t>(ValueType::array)).u32(static_cast<uint32_t>(ValueType::string));
    length(elements.size());
    for (const std::string& e : elements) {
        file.offsets.push_back(b.size());
        length(e.size());
        b.text(e);
    }
    file.bytes = std::move(b.bytes);
    return file;
}

std::vector<std::string> lines_with(const Model& m, ErrorCode code) {
    std::vector<std::string> lines;
    for (const Diagnostic& d : m.diagnostics)
        if (d.code == code) lines.push_back(d.to_line());
    return lines;
}

bool valid_utf8(const std::string& s) { return utf8_valid(s); }

// What the reader reports about `file`'s elements, worked out element by element: the first
// element of at most one window that is not UTF-8, and the first merge with no space in its
// first 4096 bytes.
std::vector<std::string> expected_lines(const std::string& key, const std::vector<std::string>& elements, const ArrayFile& file) {
    std::vector<std::string> lines;
    for (size_t k = 0; k < elements.size(); ++k) {
        if (elements[k].size() <= Cursor::kWindowBytes && !valid_utf8(elements[k])) {
            lines.push_back(Diagnostic{Severity::warning, "GGUF", ErrorCode::W_INVALID_UTF8, "kv[0].value[" + std::to_string(k) + "]",
                                       file.offsets[k], "string is not valid UTF-8"}
                                .to_line());
            break;
        }
    }
    if (key != "tokenizer.ggml.merges") return lines;
    for (size_t k = 0; k < elements.size(); ++k) {
        if (elements[k].size() <= Cursor::kWindowBytes && elements[k].substr(0, 4096).find(' ') == std::string::npos) {
            lines.push_back(Diagnostic{Severity::warning, "GGUF", ErrorCode::W_TOKENIZER_METADATA, key, file.key_at,
                                       "element " + std::to_string(k) + " has no space between its two parts"}
                                .to_line());
            break;
        }
    }
    return lines;
}

std::vector<std::string> reported_lines(const Model& m) {
    std::vector<std::string> lines = lines_with(m, ErrorCode::W_INVALID_UTF8);
    for (const std::string& line : lines_with(m, ErrorCode::W_TOKENIZER_METADATA)) lines.push_back(line);
    return lines;
}

void require_offsets(const Model& m, const std::string& key, const ArrayFile& file) {
    const MetadataEntry* e = m.find(key);
    REQUIRE(e);
    REQUIRE(e->value.array->count == file.offsets.size());
    for (size_t k = 0; k < file.offsets.size(); ++k) REQUIRE(e->value.array->element_offset(k) == file.offsets[k]);
}

// A random vocabulary: short ASCII and multi-byte pieces, merges ("a b"), elements of 128 bytes
// or more (their length fields have a byte >= 0x80), a few of hundreds of KiB (runs cross the
// window's end), rarely a broken byte or a merge without a space.
std::vector<std::string> random_elements(std::mt19937& rng, size_t count) {
    const std::string pieces[] = {"a", "the", "\xE2\x96\x81", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", "<0x41>", "_", "0"};
    const char broken[] = {'\x80', '\xC3', '\xE2', '\xED', '\xF5', '\xFF'};
    std::vector<std::string> elements;
    for (size_t k = 0; k < count; ++k) {
        std::string e;
        const unsigned shape = rng() % 1000;
        const size_t n = shape < 2 ? 40000 + rng() % 40000 : shape < 60 ? 40 + rng() % 60 : rng() % 4;
        for (size_t i = 0; i < n; ++i) e += pieces[rng() % std::size(pieces)];
        if (rng() % 500 != 0) e += " " + pieces[rng() % std::size(pieces)];
        if (rng() % 2000 == 0 && !e.empty()) e[rng() % e.size()] = broken[rng() % std::size(broken)];
        elements.push_back(std::move(e));
    }
    return elements;
}

}  // namespace

TEST_CASE("string array: the first element that is not UTF-8 is reported with its index and offset", "[gguf][scan]") {
    const std::vector<std::string> elements = {"a", "\xE2\x96\x81the", "\xC3\x28", "\xFF", std::string(300, 'x')};
    const ArrayFile file = string_array_file("test.strings", elements);
    const Model m = read_gguf_bytes(file.bytes);
    require_accepted(m, {"W_INVALID_UTF8"});
    require_warning(m, "W_INVALID_UTF8", "kv[0].value[2]", 24 + 8 + 12 + 4 + 4 + 8 + 9 + 14);
    CHECK(lines_with(m, ErrorCode::W_INVALID_UTF8).size() == 1);
    require_offsets(m, "test.strings", file);
}

TEST_CASE("string array: a broken element after a length of 128 bytes or more is found", "[gguf][scan]") {
    // The length field of a 200-byte element has the byte 0xC8.
    const std::vector<std::string> elements = {"ok", std::string(200, 'y'), "\xE2\x96", "z"};
    for (bool big_endian : {false, true}) {
        INFO("big-endian " << big_endian);
        const ArrayFile file = string_array_file("test.strings", elements, big_endian);
        const Model m = read_gguf_bytes(file.bytes);
        require_warning(m, "W_INVALID_UTF8", "kv[0].value[2]", file.offsets[2]);
        require_offsets(m, "test.strings", file);
    }
    const std::vector<std::string> long_broken = {"ok", std::string(199, 'y') + "\xC3", "z"};
    const ArrayFile file = string_array_file("test.strings", long_broken);
    require_warning(read_gguf_bytes(file.bytes), "W_INVALID_UTF8", "kv[0].value[1]", file.offsets[1]);
}

TEST_CASE("string array in GGUF v1: 32-bit lengths, the same findings", "[gguf][scan]") {
    const std::vector<std::string> elements = {"a b", "c d", "\xED\xA0\x80 x", "ef"};
    const ArrayFile file = string_array_file("tokenizer.ggml.merges", elements, false, 1);
    const Model m = read_gguf_bytes(file.bytes);
    require_accepted(m, {"W_GGUF_V1", "W_INVALID_UTF8", "W_TOKENIZER_METADATA"});
    CHECK(reported_lines(m) == expected_lines("tokenizer.ggml.merges", elements, file));
    require_offsets(m, "tokenizer.ggml.merges", file);
}

TEST_CASE("string array: an element longer than the window is not checked, a later one is", "[gguf][scan]") {
    const std::vector<std::string> elements = {"a b", std::string(Cursor::kWindowBytes + 1, '\xFF'), "c d",
                                               std::string(Cursor::kWindowBytes, '\xC3'), "e f"};
    const ArrayFile file = string_array_file("tokenizer.ggml.merges", elements);
    const Model m = read_gguf_bytes(file.bytes);
    CHECK(reported_lines(m) == expected_lines("tokenizer.ggml.merges", elements, file));
    require_warning(m, "W_INVALID_UTF8", "kv[0].value[3]", file.offsets[3]);
    require_offsets(m, "tokenizer.ggml.merges", file);
}

TEST_CASE("string array: random vocabularies give the findings worked out element by element", "[gguf][scan]") {
    std::mt19937 rng(4);
    for (int round = 0; round < 24; ++round) {
        const std::vector<std::string> elements = random_elements(rng, 2000 + rng() % 20000);
        const std::string key = round % 2 ? "tokenizer.ggml.merges" : "test.strings";
        const bool big_endian = round % 3 == 0;
        INFO("round " << round << ", " << elements.size() << " elements");
        const ArrayFile file = string_array_file(key, elements, big_endian);
        const Model m = read_gguf_bytes(file.bytes);
        CHECK(reported_lines(m) == expected_lines(key, elements, file));
        require_offsets(m, key, file);
    }
}

TEST_CASE("string array: a merge of 1 to 40 bytes is checked for its space wherever the space is, and wherever it ends",
          "[gguf][scan]") {
    for (size_t length = 1; length <= 40; ++length) {
        for (size_t space = 0; space <= length; ++space) {  // space == length: no space
            std::string merge(length, 'm');
            if (space < length) merge[space] = ' ';
            for (size_t after : {0, 10}) {  // the last element (fewer than 32 bytes follow it), or 10 more after it
                INFO("length " << length << ", space at " << space << ", " << after << " elements after it");
                std::vector<std::string> elements = {"a b", merge};
                elements.insert(elements.end(), after, "x y");
                const ArrayFile file = string_array_file("tokenizer.ggml.merges", elements);
                const Model m = read_gguf_bytes(file.bytes);
                CHECK(reported_lines(m) == expected_lines("tokenizer.ggml.merges", elements, file));
                CHECK(lines_with(m, ErrorCode::W_TOKENIZER_METADATA).size() == (space == length ? 1u : 0u));
            }
        }
    }
}
