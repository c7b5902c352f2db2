// TensorView: one logical tensor of a Model, decoded to float on demand.
//
// Contract:
//  - GGUF tensors of every type the pinned ggml knows decode through ggml's own to_float (so the
//    values are bit-exact with llama.cpp's); I8/I16/I32/I64 and F64, which ggml has no to_float
//    for, are converted here. F16, whose conversion is exact, goes through the CPU's F16C
//    instructions when it has them: the same values as ggml's, about ten times faster.
//  - safetensors tensors of dtype F64 F32 F16 BF16, I8..I64, U8..U64, BOOL (non-zero = 1),
//    F8_E4M3 (FN), F8_E5M2 and F8_E8M0 (0xFF = NaN) decode element-wise (minifloat.h).
//  - The packed entry of an Ollama/MLX quantized tensor (TensorInfo::quant) opens as the logical
//    tensor: logical shape, decoded with its scale / bias / global_scale companions per
//    mlx_quant.h. Granularity is one group. A global scale of one element multiplies everything;
//    one of `rows` elements multiplies each row; one whose length is the slowest dimension
//    (stacked experts) multiplies each slice of it (decision: ollama-store.md says "per row
//    (leading axis)", which for 2-D tensors is both). Companions opened by themselves decode as
//    their own dtype.
//  - Types that cannot be decoded (safetensors F4, F6_*, *FNUZ, C64; unknown GGUF ids; a quant
//    layout whose type is unknown or whose companions disagree in shape or dtype) fail to open
//    with E_UNSUPPORTED_TYPE (or E_SHAPE) naming the tensor and the reason; they never crash.
//  - Tensors of one-element blocks of 1 or 2 bytes (F16, BF16, I8, U8, I16, U16, BOOL, F8_*) have
//    stored codes (float_source.h): code_values() decodes every code through the same path as
//    read(), so the two agree bit for bit.
//  - Wide values (float_source.h): I32, I64, U32, U64 (integer) and F64 tensors give them exactly.
//  - quick_range (float_source.h): Q4_0, Q8_0, Q4_K, IQ4_NL and IQ4_XS tensors (block_range.h)
//    and MLX affine tensors without a global scale, from each group's least and greatest code.
//  - Code groups (float_source.h): Q4_0, Q4_1, IQ4_NL, Q4_K and IQ4_XS tensors (block_codes.h),
//    and MLX affine int4 tensors of groups of at least 16 values without a global scale (one
//    group per MLX group, codes in stored order).
//  - slice(index) narrows the view to one index of the slowest dimension (one expert of a
//    stacked [experts, out, in] tensor), reading none of the others.
//  - Reads go through Model::read_tensor_bytes, so a tensor whose bytes are missing from the file
//    gives an E_IO error, never an out-of-bounds read, and a big-endian GGUF's blocks arrive in
//    ggml's little-endian layout (read_blocks gives them so too). A tensor of a type with no
//    defined big-endian layout (gguf_byte_order.h) in a big-endian GGUF fails to open with
//    E_BIG_ENDIAN_TYPE naming the type and why.
//  - Each kind of storage (ggml blocks, element types, MLX groups) is one class
//    (core/src/quant/tensor_view_kinds.h), chosen once by open(); reads go straight to it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlens/model/model.h"
#include "mlens/quant/float_source.h"

namespace mlens {

class TensorViewKind;

// A handle on one kind of storage (tensor_view_kinds.h), picked once by open(); copies share it.
class TensorView final : public FloatSource {
public:
    enum class Kind { ggml, element, mlx };

    static Result<TensorView> open(const Model& model, size_t tensor_index);
    static Result<TensorView> open(const Model& model, const std::string& tensor_name);

    // The sub-tensor at `index` of the slowest-varying dimension.
    Result<TensorView> slice(uint64_t index) const;

    uint64_t size() const override;
    uint64_t granularity() const override;
    Status read(uint64_t first, uint64_t count, float* out) const override;
    std::vector<float> code_values() const override;
    Status read_codes(uint64_t first, uint64_t count, uint16_t* out) const override;
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override;
    CodeGroups code_groups() const override;
    Status read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const override;
    uint32_t scaled_groups() const override;
    Status read_scaled_groups(uint64_t first, uint64_t count, int8_t* codes, float* steps) const override;
    OffsetGroups offset_groups() const override;
    Status read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const override;
    WideKind wide_kind() const override;
    Status read_wide(uint64_t first, uint64_t count, long double* out) const override;

    Kind kind() const;
    const TensorInfo& info() const;
    const Model& model() const;
    // Logical shape in GGUF order (ne[0] fastest); a slice drops the slowest dimension.
    const std::vector<uint64_t>& shape() const;
    uint64_t row_length() const { return shape().empty() ? 1 : shape()[0]; }
    // "Q4_K", "BF16", or for MLX "int4 g64".
    std::string type_name() const;
    // Elements per block (ggml), 1 (element types) or the group size (MLX).
    uint64_t block_length() const { return granularity(); }
    // Bytes per block of the stored data (ggml and element kinds).
    uint64_t block_bytes() const;

    // ggml and element kinds: the bytes of blocks [first, first + count) of this view, in ggml's
    // little-endian layout.
    Status read_blocks(uint64_t first, uint64_t count, uint8_t* out) const;
    // MLX kind: decoded scale (global scale not applied) and, when `biases` is not null, bias of
    // groups [first, first + count) of this view. Non-affine modes give bias 0.
    Status read_group_params(uint64_t first, uint64_t count, float* scales, float* biases) const;

private:
    explicit TensorView(std::shared_ptr<const TensorViewKind> kind) : m_kind(std::move(kind)) {}
    std::shared_ptr<const TensorViewKind> m_kind;
};

}  // namespace mlens
