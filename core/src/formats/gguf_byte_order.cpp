#include "mlens/formats/gguf_byte_order.h"

#include <ggml.h>

#include <cassert>
#include <cstring>
#include <optional>
#include <utility>

namespace mlens {

namespace {

// A type's big-endian layout: element types reverse every element of `width` bytes; block types
// reverse `count` two-byte fields at `offsets` of every block.
struct BlockFields {
    bool elements = false;
    uint32_t width = 0;
    uint32_t count = 0;
    uint32_t offsets[2] = {};
};

std::optional<BlockFields> block_fields(uint32_t type) {
    switch (type) {
        case GGML_TYPE_F32:
        case GGML_TYPE_I32:
            return BlockFields{true, 4, 1, {}};
        case GGML_TYPE_F16:
        case GGML_TYPE_BF16:
        case GGML_TYPE_I16:
            return BlockFields{true, 2, 1, {}};
        case GGML_TYPE_I64:
        case GGML_TYPE_F64:
            return BlockFields{true, 8, 1, {}};
        case GGML_TYPE_I8:
            return BlockFields{true, 1, 0, {}};
        case GGML_TYPE_Q1_0:
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q8_0:
            return BlockFields{false, 2, 1, {0}};
        case GGML_TYPE_Q4_K:
            return BlockFields{false, 2, 2, {0, 2}};
        case GGML_TYPE_Q6_K:
            return BlockFields{false, 2, 1, {208}};
        case GGML_TYPE_TQ2_0:
            return BlockFields{false, 2, 1, {64}};
        case GGML_TYPE_MXFP4:
        case GGML_TYPE_NVFP4:
            return BlockFields{false, 1, 0, {}};
        default:
            return std::nullopt;
    }
}

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

}  // namespace

bool has_big_endian_layout(uint32_t type) { return block_fields(type).has_value(); }

std::string big_endian_refusal(const std::string& type_name) {
    return type_name +
        " has no defined big-endian layout (gguf-py defines one only for F32, F16, BF16, I8, I16, I32, I64, "
        "F64, Q1_0, Q4_0, Q8_0, Q4_K, Q6_K, TQ2_0, MXFP4 and NVFP4), so its values in a big-endian file cannot be read";
}

void reverse_block_fields(uint32_t type, uint8_t* blocks, uint64_t n_blocks) {
    const std::optional<BlockFields> f = block_fields(type);
    assert(f);
    if (!f || f->count == 0) return;
    if (f->elements) {
        switch (f->width) {
            case 2:
                return reverse_words<uint16_t, reverse16>(blocks, n_blocks);
            case 4:
                return reverse_words<uint32_t, reverse32>(blocks, n_blocks);
            case 8:
                return reverse_words<uint64_t, reverse64>(blocks, n_blocks);
        }
        return;
    }
    const uint64_t block_bytes = ggml_type_size(static_cast<ggml_type>(type));
    for (uint64_t b = 0; b < n_blocks; ++b)
        for (uint32_t k = 0; k < f->count; ++k) {
            uint8_t* field = blocks + b * block_bytes + f->offsets[k];
            std::swap(field[0], field[1]);
        }
}

}  // namespace mlens
