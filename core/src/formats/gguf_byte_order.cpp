#include "mlens/formats/gguf_byte_order.h"

#include <cassert>
#include <cstring>
#include <string_view>
#include <vector>

#include "mlens/formats/ggml_type_table.h"

namespace mlens {

namespace {

template <typename Word, Word (*reverse)(Word)>
void reverse_words(uint8_t* bytes, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
        Word w;
        std::memcpy(&w, bytes + i * sizeof(Word), sizeof(Word));
        w = reverse(w);
        std::memcpy(bytes + i * sizeof(Word), &w, sizeof(Word));
    }
}

uint16_t reverse16(uint16_t v) { return __builtin_bswap16(v); }
uint32_t reverse32(uint32_t v) { return __builtin_bswap32(v); }
uint64_t reverse64(uint64_t v) { return __builtin_bswap64(v); }

// Reverses `n` consecutive words of `width` bytes.
void reverse_run(uint8_t* bytes, uint64_t n, uint32_t width) {
    switch (width) {
        case 2:
            return reverse_words<uint16_t, reverse16>(bytes, n);
        case 4:
            return reverse_words<uint32_t, reverse32>(bytes, n);
        case 8:
            return reverse_words<uint64_t, reverse64>(bytes, n);
        default:
            assert(false && "no such word width");
    }
}

}  // namespace

bool has_big_endian_layout(uint32_t type) {
    const GgmlTypeRow* row = ggml_type_row(type);
    return row && row->big_endian.defined;
}

std::string big_endian_refusal(const std::string& type_name) {
    std::vector<std::string_view> defined;
    for (const GgmlTypeRow& row : ggml_type_rows())
        if (row.big_endian.defined) defined.push_back(row.name);
    std::string list;
    for (size_t i = 0; i < defined.size(); ++i) {
        if (i > 0) list += i + 1 == defined.size() ? " and " : ", ";
        list += defined[i];
    }
    return type_name + " has no defined big-endian layout (gguf-py defines one only for " + list +
        "), so its values in a big-endian file cannot be read";
}

void reverse_block_fields(uint32_t type, uint8_t* blocks, uint64_t n_blocks) {
    const GgmlTypeRow* row = ggml_type_row(type);
    assert(row && row->big_endian.defined);
    if (!row || row->big_endian.width == 0) return;
    const BigEndianLayout& f = row->big_endian;
    // Element types reverse the whole block: the blocks are one run of words.
    if (f.offset == 0 && f.bytes == row->block_bytes) return reverse_run(blocks, n_blocks * f.bytes / f.width, f.width);
    for (uint64_t b = 0; b < n_blocks; ++b) reverse_run(blocks + b * row->block_bytes + f.offset, f.bytes / f.width, f.width);
}

}  // namespace mlens
