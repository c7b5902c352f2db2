#include "mlens/formats/ggml_type_table.h"

#include <ggml.h>

namespace mlens {

namespace {

constexpr GgmlScaleField half(const char* name, uint16_t offset, uint16_t covers) {
    return {name, offset, ScaleEncoding::f16, covers};
}

// Big-endian layouts: every element reversed, one range of words reversed, or nothing reversed
// (one-byte fields only).
constexpr BigEndianLayout whole(uint8_t width) { return {true, 0, width, width}; }
constexpr BigEndianLayout words(uint16_t offset, uint16_t bytes, uint8_t width) { return {true, offset, bytes, width}; }
constexpr BigEndianLayout kBytesOnly{true, 0, 0, 0};

// Block layouts are ggml's (ggml-common.h); offsets name the fields that precede them.
constexpr GgmlTypeRow kRows[] = {
    {.id = GGML_TYPE_F32, .name = "F32", .block_elements = 1, .block_bytes = 4, .element = GgmlElement::f32,
     .big_endian = whole(4), .ftype_names = {"F32"}},
    {.id = GGML_TYPE_F16, .name = "F16", .block_elements = 1, .block_bytes = 2, .element = GgmlElement::f16,
     .big_endian = whole(2), .requant = true, .ftype_names = {"F16"}},
    // d, qs[16]
    {.id = GGML_TYPE_Q4_0, .name = "Q4_0", .block_elements = 32, .block_bytes = 18, .scale_fields = {half("d", 0, 32)},
     .scale_count = 1, .scale_series = true, .big_endian = words(0, 2, 2), .range = BlockRangeKind::q4_0,
     .codes = BlockCodesKind::q4_0, .requant = true, .ftype_names = {"Q4_0"}},
    // d, m, qs[16]
    {.id = GGML_TYPE_Q4_1, .name = "Q4_1", .block_elements = 32, .block_bytes = 20,
     .scale_fields = {half("d", 0, 32), half("m", 2, 32)}, .scale_count = 2, .scale_series = true,
     .range = BlockRangeKind::q4_1, .codes = BlockCodesKind::q4_1, .requant = true, .ftype_names = {"Q4_1"}},
    // d, qh[4], qs[16]
    {.id = GGML_TYPE_Q5_0, .name = "Q5_0", .block_elements = 32, .block_bytes = 22, .scale_fields = {half("d", 0, 32)},
     .scale_count = 1, .scale_series = true, .range = BlockRangeKind::q5_0, .codes = BlockCodesKind::q5_0, .requant = true, .ftype_names = {"Q5_0"}},
    // d, m, qh[4], qs[16]
    {.id = GGML_TYPE_Q5_1, .name = "Q5_1", .block_elements = 32, .block_bytes = 24,
     .scale_fields = {half("d", 0, 32), half("m", 2, 32)}, .scale_count = 2, .scale_series = true, .range = BlockRangeKind::q5_1,
     .codes = BlockCodesKind::q5_1, .requant = true, .ftype_names = {"Q5_1"}},
    // d, qs[32]
    {.id = GGML_TYPE_Q8_0, .name = "Q8_0", .block_elements = 32, .block_bytes = 34, .scale_fields = {half("d", 0, 32)},
     .scale_count = 1, .scale_series = true, .big_endian = words(0, 2, 2), .range = BlockRangeKind::q8_0, .steps = BlockStepsKind::q8_0,
     .requant = true,
     .ftype_names = {"Q8_0"}},
    // d, s (d times the sum of the codes), qs[32]
    {.id = GGML_TYPE_Q8_1, .name = "Q8_1", .block_elements = 32, .block_bytes = 36, .scale_fields = {half("d", 0, 32)},
     .scale_count = 1},
    // scales[16], qs[64], d, dmin
    {.id = GGML_TYPE_Q2_K, .name = "Q2_K", .block_elements = 256, .block_bytes = 84,
     .scale_fields = {half("d", 80, 256), half("dmin", 82, 256)}, .scale_count = 2, .sub_scales = SubScales::q2_k,
     .sub_scales_offset = 0, .scale_series = true, .requant = true, .ftype_names = {"Q2_K", "Q2_K_S"}},
    // hmask[32], qs[64], scales[12], d
    {.id = GGML_TYPE_Q3_K, .name = "Q3_K", .block_elements = 256, .block_bytes = 110, .scale_fields = {half("d", 108, 256)},
     .scale_count = 1, .sub_scales = SubScales::q3_k, .sub_scales_offset = 96, .scale_series = true, .requant = true,
     .ftype_names = {"Q3_K", "Q3_K_S", "Q3_K_M", "Q3_K_L"}},
    // d, dmin, scales[12], qs[128]
    {.id = GGML_TYPE_Q4_K, .name = "Q4_K", .block_elements = 256, .block_bytes = 144,
     .scale_fields = {half("d", 0, 256), half("dmin", 2, 256)}, .scale_count = 2, .sub_scales = SubScales::k4,
     .sub_scales_offset = 4, .scale_series = true, .big_endian = words(0, 4, 2), .range = BlockRangeKind::q4_k,
     .codes = BlockCodesKind::q4_k, .requant = true, .ftype_names = {"Q4_K", "Q4_K_S", "Q4_K_M"}},
    // d, dmin, scales[12], qh[32], qs[128]
    {.id = GGML_TYPE_Q5_K, .name = "Q5_K", .block_elements = 256, .block_bytes = 176,
     .scale_fields = {half("d", 0, 256), half("dmin", 2, 256)}, .scale_count = 2, .sub_scales = SubScales::k4,
     .sub_scales_offset = 4, .scale_series = true, .range = BlockRangeKind::q5_k, .codes = BlockCodesKind::q5_k, .requant = true,
     .ftype_names = {"Q5_K", "Q5_K_S", "Q5_K_M"}},
    // ql[128], qh[64], scales[16], d
    {.id = GGML_TYPE_Q6_K, .name = "Q6_K", .block_elements = 256, .block_bytes = 210, .scale_fields = {half("d", 208, 256)},
     .scale_count = 1, .sub_scales = SubScales::q6_k, .sub_scales_offset = 192, .scale_series = true,
     .big_endian = words(208, 2, 2), .range = BlockRangeKind::q6_k, .steps = BlockStepsKind::q6_k, .requant = true,
     .ftype_names = {"Q6_K"}},
    // d (f32), qs[256], bsums[16]
    {.id = GGML_TYPE_Q8_K, .name = "Q8_K", .block_elements = 256, .block_bytes = 292,
     .scale_fields = {GgmlScaleField{"d", 0, ScaleEncoding::f32, 256}}, .scale_count = 1, .scale_series = true},
    // The IQ1-IQ3 codebook types: d, then codes whose bits carry the sub-block scales.
    {.id = GGML_TYPE_IQ2_XXS, .name = "IQ2_XXS", .block_elements = 256, .block_bytes = 66,
     .scale_fields = {half("d", 0, 256)}, .scale_count = 1, .sub_scales = SubScales::packed, .requant = true,
     .ftype_names = {"IQ2_XXS"}},
    {.id = GGML_TYPE_IQ2_XS, .name = "IQ2_XS", .block_elements = 256, .block_bytes = 74, .scale_fields = {half("d", 0, 256)},
     .scale_count = 1, .sub_scales = SubScales::packed, .requant = true, .ftype_names = {"IQ2_XS", "IQ2_S"}},
    {.id = GGML_TYPE_IQ3_XXS, .name = "IQ3_XXS", .block_elements = 256, .block_bytes = 98,
     .scale_fields = {half("d", 0, 256)}, .scale_count = 1, .sub_scales = SubScales::packed, .requant = true,
     .ftype_names = {"IQ3_XXS"}},
    {.id = GGML_TYPE_IQ1_S, .name = "IQ1_S", .block_elements = 256, .block_bytes = 50, .scale_fields = {half("d", 0, 256)},
     .scale_count = 1, .sub_scales = SubScales::packed, .requant = true, .ftype_names = {"IQ1_S"}},
    // d, qs[16]
    {.id = GGML_TYPE_IQ4_NL, .name = "IQ4_NL", .block_elements = 32, .block_bytes = 18, .scale_fields = {half("d", 0, 32)},
     .scale_count = 1, .scale_series = true, .range = BlockRangeKind::iq4_nl, .codes = BlockCodesKind::iq4_nl,
     .requant = true, .ftype_names = {"IQ4_NL"}},
    {.id = GGML_TYPE_IQ3_S, .name = "IQ3_S", .block_elements = 256, .block_bytes = 110, .scale_fields = {half("d", 0, 256)},
     .scale_count = 1, .sub_scales = SubScales::packed, .requant = true, .ftype_names = {"IQ3_S", "IQ3_XS", "IQ3_M"}},
    {.id = GGML_TYPE_IQ2_S, .name = "IQ2_S", .block_elements = 256, .block_bytes = 82, .scale_fields = {half("d", 0, 256)},
     .scale_count = 1, .sub_scales = SubScales::packed, .requant = true, .ftype_names = {"IQ2_M"}},
    // d, scales_h (u16), scales_l[4], qs[128]
    {.id = GGML_TYPE_IQ4_XS, .name = "IQ4_XS", .block_elements = 256, .block_bytes = 136, .scale_fields = {half("d", 0, 256)},
     .scale_count = 1, .sub_scales = SubScales::iq4_xs, .sub_scales_offset = 2, .scale_series = true,
     .range = BlockRangeKind::iq4_xs, .codes = BlockCodesKind::iq4_xs, .requant = true, .ftype_names = {"IQ4_XS"}},
    {.id = GGML_TYPE_I8, .name = "I8", .block_elements = 1, .block_bytes = 1, .element = GgmlElement::i8,
     .big_endian = kBytesOnly},
    {.id = GGML_TYPE_I16, .name = "I16", .block_elements = 1, .block_bytes = 2, .element = GgmlElement::i16,
     .big_endian = whole(2)},
    {.id = GGML_TYPE_I32, .name = "I32", .block_elements = 1, .block_bytes = 4, .element = GgmlElement::i32,
     .big_endian = whole(4)},
    {.id = GGML_TYPE_I64, .name = "I64", .block_elements = 1, .block_bytes = 8, .element = GgmlElement::i64,
     .big_endian = whole(8)},
    {.id = GGML_TYPE_F64, .name = "F64", .block_elements = 1, .block_bytes = 8, .element = GgmlElement::f64,
     .big_endian = whole(8)},
    // qs[32], qh[16], scales[8]: its d is spread over the top nibbles of the scales.
    {.id = GGML_TYPE_IQ1_M, .name = "IQ1_M", .block_elements = 256, .block_bytes = 56, .sub_scales = SubScales::packed,
     .requant = true, .ftype_names = {"IQ1_M"}},
    {.id = GGML_TYPE_BF16, .name = "BF16", .block_elements = 1, .block_bytes = 2, .element = GgmlElement::bf16,
     .big_endian = whole(2), .requant = true, .ftype_names = {"BF16"}},
    // qs[48], qh[4], d
    {.id = GGML_TYPE_TQ1_0, .name = "TQ1_0", .block_elements = 256, .block_bytes = 54, .scale_fields = {half("d", 52, 256)},
     .scale_count = 1, .requant = true, .ftype_names = {"TQ1_0"}},
    // qs[64], d
    {.id = GGML_TYPE_TQ2_0, .name = "TQ2_0", .block_elements = 256, .block_bytes = 66, .scale_fields = {half("d", 64, 256)},
     .scale_count = 1, .big_endian = words(64, 2, 2), .requant = true, .ftype_names = {"TQ2_0"}},
    // e, qs[16]
    {.id = GGML_TYPE_MXFP4, .name = "MXFP4", .block_elements = 32, .block_bytes = 17,
     .scale_fields = {GgmlScaleField{"scale", 0, ScaleEncoding::e8m0, 32}}, .scale_count = 1, .scale_series = true,
     .big_endian = kBytesOnly, .requant = true, .ftype_names = {"MXFP4_MOE"}},
    // d[4] (one per 16 values), qs[32]
    {.id = GGML_TYPE_NVFP4, .name = "NVFP4", .block_elements = 64, .block_bytes = 36,
     .scale_fields = {GgmlScaleField{"scale", 0, ScaleEncoding::ue4m3, 16, 4}}, .scale_count = 1, .big_endian = kBytesOnly,
     .requant = true},
    // d, qs[16]
    {.id = GGML_TYPE_Q1_0, .name = "Q1_0", .block_elements = 128, .block_bytes = 18, .scale_fields = {half("d", 0, 128)},
     .scale_count = 1, .big_endian = words(0, 2, 2), .requant = true, .ftype_names = {"Q1_0"}},
    // d, qs[16]
    {.id = GGML_TYPE_Q2_0, .name = "Q2_0", .block_elements = 64, .block_bytes = 18, .scale_fields = {half("d", 0, 64)},
     .scale_count = 1, .requant = true, .ftype_names = {"Q2_0"}},
};

// Rows in id order, as ggml_type_rows promises.
constexpr bool ascending_ids() {
    for (size_t i = 1; i < std::size(kRows); ++i)
        if (kRows[i - 1].id >= kRows[i].id) return false;
    return true;
}
static_assert(ascending_ids());
static_assert(kRows[std::size(kRows) - 1].id < GGML_TYPE_COUNT);

// Index by id into kRows (-1: no row), built at compile time.
constexpr std::array<int8_t, GGML_TYPE_COUNT> row_index() {
    std::array<int8_t, GGML_TYPE_COUNT> index{};
    index.fill(-1);
    for (size_t i = 0; i < std::size(kRows); ++i) index[kRows[i].id] = static_cast<int8_t>(i);
    return index;
}
constexpr std::array<int8_t, GGML_TYPE_COUNT> kRowIndex = row_index();

}  // namespace

const GgmlTypeRow* ggml_type_row(uint32_t id) {
    if (id >= GGML_TYPE_COUNT || kRowIndex[id] < 0) return nullptr;
    return &kRows[kRowIndex[id]];
}

std::span<const GgmlTypeRow> ggml_type_rows() { return kRows; }

}  // namespace mlens
