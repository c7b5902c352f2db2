// Per-block scale distribution of a quantized tensor: the scales (and minimums / biases) its
// blocks store, decoded to float, one value per block or sub-block in tensor order.
//
// Contract (series by storage type, from the scale fields and sub-block scales of the types whose
// row in ggml_type_table.h has scale_series; "d" is the fp16 block or super-block scale):
//  - Q4_0, Q5_0, Q8_0, IQ4_NL: d per 32-value block. Q4_1, Q5_1: d and m per block.
//  - Q8_K: d (float32) per 256-value super-block.
//  - Q2_K: d, dmin per super-block; sub_scale = d * (sc & 15), sub_min = dmin * (sc >> 4) per
//    16-value sub-block.
//  - Q3_K: d; sub_scale = d * (s - 32) per 16-value sub-block, s the 6-bit scale.
//  - Q4_K, Q5_K: d, dmin; sub_scale = d * sc, sub_min = dmin * m per 32-value sub-block (6-bit
//    sc and m as ggml's get_scale_min_k4 unpacks them).
//  - Q6_K: d; sub_scale = d * sc per 16-value sub-block (signed 8-bit sc).
//  - IQ4_XS: d; sub_scale = d * (ls - 32) per 32-value sub-block.
//  - ggml MXFP4: scale = 2^(e - 127) per 32-value block.
//  - MLX tensors: scale per group (E4M3 / E8M0 decoded for fp modes; a global scale is not
//    applied) and, for affine, bias per group.
//  - Any other type (F16, BF16, IQ1–IQ3, TQ*, NVFP4, safetensors element types) is
//    E_UNSUPPORTED_TYPE: it stores no block scales this function decodes.
//  - A tensor whose series would hold more than kMaxSeriesEntries entries (analysis_memory.h)
//    gets those of every k-th block (or group) only, k the least that keeps each series within
//    it (`stride` says k; 1: every block): a uniform sample of the distribution.
//  - Reads in chunks; honours JobContext cancel (E_CANCELLED) and reports progress.
#pragma once

#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/quant/tensor_view.h"

namespace mlens {

struct ScaleSeries {
    std::string name;  // "d", "dmin", "sub_scale", "sub_min", "m", "scale", "bias"
    uint64_t values_per_entry = 0;  // tensor values each entry covers
    std::vector<float> values;
    uint64_t stride = 1;  // entries are those of every stride-th block (row series: 1)
};

struct BlockScales {
    std::string type;  // as TensorView::type_name()
    std::vector<ScaleSeries> series;
    const ScaleSeries* find(const std::string& name) const;
};

Result<BlockScales> block_scales(const TensorView& view, JobContext* job = nullptr);

}  // namespace mlens
