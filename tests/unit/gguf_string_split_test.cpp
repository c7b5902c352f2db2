// A large STRING array in a file is scanned in two parts at once (gguf_string_split.h): every
// element's offset, and every diagnostic with its element and offset, are those of the scan on
// one thread (the same bytes read from memory, which are never split), wherever the second part's
// guessed start and slot fall: arrays whose first elements are longer or shorter than the rest, a
// broken text, a merge with no space or a bad byte token in either part, an element over the
// length limit or a file cut in the second part, and an array followed by more metadata.
#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/io/byte_source.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

struct ArrayFile {
    std::vector<uint8_t> bytes;
    uint64_t key_at = 0;
    std::vector<uint64_t> offsets;  // of each element's length field
};

// `key` holding `elements`, then a string KV (what a scan reading past the array finds).
ArrayFile array_file(const std::string& key, const std::vector<std::string>& elements) {
    GgufBuilder b;
    ArrayFile file;
    b.header(0, 2);
    file.key_at = b.size();
    b.kv_array(key, ValueType::string, elements.size());
    for (const std::string& e : elements) {
        file.offsets.push_back(b.size());
        b.str(e);
    }
    b.kv_string("general.name", "after the array");
    file.bytes = std::move(b.bytes);
    return file;
}

// Merges ("a b") in runs: `count` of at least `bytes` bytes before the space, for each run.
struct Run {
    size_t count, bytes;
};

std::vector<std::string> merges(std::mt19937& rng, const std::vector<Run>& runs) {
    const std::string pieces[] = {"a", "th", "\xE2\x96\x81", "\xC3\xA9", "\xE4\xB8\xAD", "<0x41>", "_", "0"};
    std::vector<std::string> elements;
    for (const Run& run : runs) {
        for (size_t k = 0; k < run.count; ++k) {
            std::string e = pieces[rng() % std::size(pieces)];
            while (e.size() < run.bytes) e += pieces[rng() % std::size(pieces)];
            for (unsigned n = rng() % 3; n > 0; --n) e += pieces[rng() % std::size(pieces)];
            elements.push_back(e + " " + pieces[rng() % std::size(pieces)]);
        }
    }
    return elements;
}

std::vector<std::string> merges(std::mt19937& rng, size_t count) { return merges(rng, {{count, 0}}); }

std::vector<std::string> lines(const Model& m) {
    std::vector<std::string> out;
    for (const Diagnostic& d : m.diagnostics) out.push_back(d.to_line());
    return out;
}

struct Opened {
    Model from_file;
    Model from_memory;  // the same bytes, scanned on one thread
};

Opened open_both(const TempDir& dir, const std::vector<uint8_t>& bytes, const GgufLimits& limits = {}) {
    const std::string path = dir.file("split.gguf");
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    auto source = open_file(path);
    REQUIRE(source);
    return {read_gguf(*source, limits), read_gguf(memory_source(bytes), limits)};
}

void require_offsets(const Model& m, const std::string& key, const std::vector<uint64_t>& offsets) {
    const MetadataEntry* e = m.find(key);
    REQUIRE(e);
    REQUIRE(e->value.array->count == offsets.size());
    for (size_t k = 0; k < offsets.size(); ++k) {
        INFO("element " << k);
        REQUIRE(e->value.array->element_offset(k) == offsets[k]);
    }
}

void require_same(const Opened& opened, const std::string& key, const ArrayFile& file) {
    CHECK(lines(opened.from_file) == lines(opened.from_memory));
    require_offsets(opened.from_file, key, file.offsets);
    require_offsets(opened.from_memory, key, file.offsets);
    REQUIRE(opened.from_file.find("general.name"));
}

std::string warning(ErrorCode code, const std::string& field, uint64_t offset, const std::string& message) {
    return Diagnostic{Severity::warning, "GGUF", code, field, offset, message}.to_line();
}

}  // namespace

TEST_CASE("string array split: offsets of arrays whose first elements are as long as, longer or shorter than the rest",
          "[gguf][scan][split]") {
    TempDir dir;
    std::mt19937 rng(35);
    // Uniform; longer first (the second part starts before the guess); shorter first (the second
    // part holds more than its place in the table); the middle much shorter than the rest (the
    // first part holds more elements than guessed); longer first by far (the estimate passes the
    // array's end: one scan).
    const std::vector<std::vector<Run>> shapes = {{{300000, 0}},
                                                  {{40000, 48}, {260000, 0}},
                                                  {{40000, 0}, {260000, 24}},
                                                  {{20000, 8}, {230000, 0}, {50000, 100}},
                                                  {{20000, 60}, {80000, 0}}};
    for (size_t s = 0; s < shapes.size(); ++s) {
        INFO("shape " << s);
        const std::vector<std::string> elements = merges(rng, shapes[s]);
        const ArrayFile file = array_file("tokenizer.ggml.merges", elements);
        const Opened opened = open_both(dir, file.bytes);
        CHECK(lines(opened.from_file).empty());
        require_same(opened, "tokenizer.ggml.merges", file);
    }
}

TEST_CASE("string array split: the first broken text and the first merge with no space, in either part", "[gguf][scan][split]") {
    TempDir dir;
    std::mt19937 rng(36);
    struct Faults {
        size_t broken_text, no_space;
    };
    for (const Faults faults : {Faults{250000, 260000}, Faults{260000, 250000}, Faults{5000, 280000}, Faults{280000, 5000}}) {
        INFO("broken text at " << faults.broken_text << ", no space at " << faults.no_space);
        std::vector<std::string> elements = merges(rng, 300000);
        elements[faults.broken_text] += "\xC3";
        elements[faults.broken_text + 1000] += "\xFF";  // a later one is not reported
        elements[faults.no_space] = "nospace";
        elements[faults.no_space + 1000] = "neither";
        const ArrayFile file = array_file("tokenizer.ggml.merges", elements);
        const Opened opened = open_both(dir, file.bytes);
        require_same(opened, "tokenizer.ggml.merges", file);
        const std::string field = "kv[0].value[" + std::to_string(faults.broken_text) + "]";
        CHECK(lines(opened.from_file) ==
              std::vector<std::string>{
                  warning(ErrorCode::W_INVALID_UTF8, field, file.offsets[faults.broken_text], "string is not valid UTF-8"),
                  warning(ErrorCode::W_TOKENIZER_METADATA, "tokenizer.ggml.merges", file.key_at,
                          "element " + std::to_string(faults.no_space) + " has no space between its two parts")});
    }
}

TEST_CASE("string array split: a bad byte token in the second part", "[gguf][scan][split]") {
    TempDir dir;
    std::mt19937 rng(37);
    std::vector<std::string> elements = merges(rng, 300000);
    elements[270000] = "<0xZZ>";
    const ArrayFile file = array_file("tokenizer.ggml.tokens", elements);
    const Opened opened = open_both(dir, file.bytes);
    require_same(opened, "tokenizer.ggml.tokens", file);
    CHECK(lines(opened.from_file) ==
          std::vector<std::string>{warning(ErrorCode::W_TOKENIZER_METADATA, "tokenizer.ggml.tokens", file.key_at,
                                           "element 270000 looks like a byte token but is not <0xNN>")});
}

TEST_CASE("string array split: an element over the length limit or a cut in the second part is the error of one scan",
          "[gguf][scan][split]") {
    TempDir dir;
    std::mt19937 rng(38);
    std::vector<std::string> elements = merges(rng, 300000);
    elements[265000] = std::string(3000, 'x') + " y";
    const ArrayFile file = array_file("tokenizer.ggml.merges", elements);
    GgufLimits limits;
    limits.max_string_bytes = 2048;
    const Opened over_limit = open_both(dir, file.bytes, limits);
    REQUIRE(over_limit.from_file.partial);
    CHECK(lines(over_limit.from_file) == lines(over_limit.from_memory));
    CHECK(lines(over_limit.from_file).back() ==
          Diagnostic{Severity::error, "GGUF", ErrorCode::E_LIMIT, "kv[0].value[265000]", file.offsets[265000],
                     "length 3002 exceeds limit max_string_bytes=2048"}
              .to_line());

    const std::vector<uint8_t> cut(file.bytes.begin(), file.bytes.begin() + static_cast<std::ptrdiff_t>(file.offsets[280000] + 4));
    const Opened truncated = open_both(dir, cut);
    REQUIRE(truncated.from_file.partial);
    CHECK(lines(truncated.from_file) == lines(truncated.from_memory));
    CHECK(lines(truncated.from_file).back() ==
          Diagnostic{Severity::error, "GGUF", ErrorCode::E_TRUNCATED, "kv[0].value[280000]", file.offsets[280000], "need 8 bytes, have 4"}
              .to_line());
}
