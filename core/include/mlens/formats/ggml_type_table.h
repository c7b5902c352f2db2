// Every per-type fact ModelLens uses about the pinned ggml's tensor types, one row per type:
// block layout, scale fields, sub-block scales, big-endian layout, exact-range and code-group readers, requant
// support and the llama-quantize ftype names that produce the type.
//
// Contract:
//  - ggml_type_row(id) is the row of every type the pinned ggml (0.5.0) knows, nullptr for ids it
//    removed (4, 5, 31-33, 36-38) or never had (>= 43). Rows are compile-time constants; nothing
//    else in core or app switches over ggml type ids (a unit test scans the sources), so a fact
//    about a type is read here or in ggml itself.
//  - name, block_elements and block_bytes equal ggml's type name (upper-cased), ggml_blck_size
//    and ggml_type_size (a unit test compares every row with the linked ggml).
//  - element: how one value of an element type is stored (F32, F16, BF16, F64, I8..I64); none for
//    block types.
//  - scales: the scale fields each block stores directly, in block order of meaning (d before
//    dmin / m), each with its offset in the block, encoding and the number of values it scales.
//    A field with count > 1 is that many one-byte scales at consecutive offsets (NVFP4).
//  - sub_scales: how the block's packed sub-block scales (K-quants, IQ4_XS) are laid out, read at
//    sub_scales_offset; packed for the IQ1-IQ3 codebook types, whose sub-block scales share bits
//    with their codes and are not decoded; none where the scale fields are the whole story.
//  - scale_series: whether block_scales (block_scales.h) decodes this type's scales.
//  - big_endian: the bytes a big-endian GGUF stores reversed, defined by gguf-py's endian
//    converter and big-endian writer (gguf_byte_order.h): `bytes` bytes at `offset` of every
//    block, reversed in words of `width` bytes; width 0 reverses nothing. Types without a
//    defined layout have defined == false.
//  - range: which exact-range reader (block_range.h) finds the extremes of the type's blocks
//    from codes and scales, none where values must be decoded.
//  - codes: which code-group reader (block_codes.h) gives the type's values as groups of 4-bit
//    codes with each group's code values; none for every other type.
//  - requant: whether ggml_quantize_chunk quantizes to the type (any other type aborts inside
//    ggml).
//  - ftypes: the names llama-quantize (tools/quantize) accepts whose default type
//    (llama_ftype_get_default_type) is this type, the one a recipe prints first; none for types
//    no ftype produces (Q8_1, Q8_K, NVFP4, the integer types, F64).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace mlens {

enum class GgmlElement : uint8_t { none, f32, f16, bf16, f64, i8, i16, i32, i64 };

// f16: IEEE half; f32: IEEE single; e8m0: 2^(e - 127), 0xFF NaN; ue4m3: unsigned E4M3.
enum class ScaleEncoding : uint8_t { f16, f32, e8m0, ue4m3 };

struct GgmlScaleField {
    const char* name;  // "d", "dmin", "m", "scale"
    uint16_t offset;  // in the block
    ScaleEncoding encoding;
    uint16_t covers;  // values each scale multiplies
    uint8_t count = 1;
};

// Packed sub-block scales: q2_k 16 bytes of (scale, min) nibbles; q3_k 12 bytes of 6-bit signed
// (bias 32) scales; k4 12 bytes of 6-bit scale and min pairs (Q4_K, Q5_K, ggml's
// get_scale_min_k4); q6_k 16 signed bytes; iq4_xs 2 bytes of high bits then 4 bytes of low
// nibbles, 6-bit (bias 32).
enum class SubScales : uint8_t { none, q2_k, q3_k, k4, q6_k, iq4_xs, packed };

struct BigEndianLayout {
    bool defined = false;
    uint16_t offset = 0, bytes = 0;
    uint8_t width = 0;
};

// Exact-range readers (block_range.h): q4_0 and iq4_nl share a block shape with different code
// values.
enum class BlockRangeKind : uint8_t { none, q4_0, q4_1, q5_0, q5_1, iq4_nl, q8_0, q4_k, q5_k, q6_k, iq4_xs };

// Code-group readers (block_codes.h), one per block layout.
enum class BlockCodesKind : uint8_t { none, q4_0, q4_1, q5_0, q5_1, iq4_nl, q4_k, q5_k, iq4_xs };

// Scaled-group readers (block_steps.h): values that are a code times its group's step, exactly.
enum class BlockStepsKind : uint8_t { none, q8_0, q6_k };

struct GgmlTypeRow {
    uint32_t id = 0;
    const char* name = "";
    uint32_t block_elements = 0;
    uint32_t block_bytes = 0;
    GgmlElement element = GgmlElement::none;
    std::array<GgmlScaleField, 2> scale_fields{};
    uint8_t scale_count = 0;
    SubScales sub_scales = SubScales::none;
    uint16_t sub_scales_offset = 0;
    bool scale_series = false;
    BigEndianLayout big_endian{};
    BlockRangeKind range = BlockRangeKind::none;
    BlockCodesKind codes = BlockCodesKind::none;
    BlockStepsKind steps = BlockStepsKind::none;
    bool requant = false;
    std::array<const char*, 4> ftype_names{};

    std::span<const GgmlScaleField> scales() const { return {scale_fields.data(), scale_count}; }
    // The first ftype name, "" when no ftype produces the type.
    std::string_view first_ftype() const { return ftype_names[0] ? ftype_names[0] : ""; }
};

// The row of a type the pinned ggml knows, else nullptr.
const GgmlTypeRow* ggml_type_row(uint32_t id);

// Every row, in id order.
std::span<const GgmlTypeRow> ggml_type_rows();

}  // namespace mlens
