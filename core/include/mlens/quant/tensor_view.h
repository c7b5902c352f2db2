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
//  - slice(index) narrows the view to one index of the slowest dimension (one expert of a
//    stacked [experts, out, in] tensor), reading none of the others.
//  - Reads go through Model::read_tensor_bytes, so a tensor whose bytes are missing from the file
//    gives an E_IO error, never an out-of-bounds read, and a big-endian GGUF's blocks arrive in
//    ggml's little-endian layout (read_blocks gives them so too). A tensor of a type with no
//    defined big-endian layout (gguf_byte_order.h) in a big-endian GGUF fails to open with
//    E_BIG_ENDIAN_TYPE naming the type and why.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlens/model/model.h"
#include "mlens/quant/float_source.h"

namespace mlens {

class TensorView final : public FloatSource {
public:
    enum class Kind { ggml, element, mlx };

    static Result<TensorView> open(const Model& model, size_t tensor_index);
    static Result<TensorView> open(const Model& model, const std::string& tensor_name);

    // The sub-tensor at `index` of the slowest-varying dimension.
    Result<TensorView> slice(uint64_t index) const;

    uint64_t size() const override { return m_elements; }
    uint64_t granularity() const override { return m_block; }
    Status read(uint64_t first, uint64_t count, float* out) const override;
    std::vector<float> code_values() const override;
    Status read_codes(uint64_t first, uint64_t count, uint16_t* out) const override;
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override;
    WideKind wide_kind() const override;
    Status read_wide(uint64_t first, uint64_t count, long double* out) const override;

    Kind kind() const { return m_kind; }
    const TensorInfo& info() const { return m_model->tensors[m_index]; }
    const Model& model() const { return *m_model; }
    // Logical shape in GGUF order (ne[0] fastest); a slice drops the slowest dimension.
    const std::vector<uint64_t>& shape() const { return m_ne; }
    uint64_t row_length() const { return m_ne.empty() ? 1 : m_ne[0]; }
    // "Q4_K", "BF16", or for MLX "int4 g64".
    std::string type_name() const;
    // Elements per block (ggml), 1 (element types) or the group size (MLX).
    uint64_t block_length() const { return m_block; }
    // Bytes per block of the stored data (ggml and element kinds).
    uint64_t block_bytes() const { return m_block_bytes; }

    // ggml and element kinds: the bytes of blocks [first, first + count) of this view, in ggml's
    // little-endian layout.
    Status read_blocks(uint64_t first, uint64_t count, uint8_t* out) const;
    // MLX kind: decoded scale (global scale not applied) and, when `biases` is not null, bias of
    // groups [first, first + count) of this view. Non-affine modes give bias 0.
    Status read_group_params(uint64_t first, uint64_t count, float* scales, float* biases) const;

private:
    TensorView(const Model& model, size_t index);
    Status open_mlx();
    Status read_mlx(uint64_t first, uint64_t count, float* out) const;
    // read()'s alignment rules for [first, first + count).
    Status check_read_range(uint64_t first, uint64_t count) const;
    // MLX kind: the packed codes, scales and biases of whole groups from `first_group`, into per-thread buffers.
    struct MlxGroups {
        const uint8_t* packed;
        const float* scales;
        const float* biases;
    };
    Result<MlxGroups> read_mlx_groups(uint64_t first_group, uint64_t groups) const;
    Status read_companion(size_t index, uint64_t first, uint64_t count, float* out) const;
    // ggml and element kinds: `count` values from their stored bytes.
    void decode(const uint8_t* bytes, uint64_t count, float* out) const;
    // Bytes of one stored code (1 or 2), or 0 when values are not stored as codes.
    uint32_t code_bytes() const;

    const Model* m_model;
    size_t m_index;
    Kind m_kind = Kind::ggml;
    int m_element = 0;            // ElementType for Kind::element
    uint64_t m_block = 1;         // elements per block (group for MLX)
    uint64_t m_block_bytes = 4;   // bytes per block
    uint64_t m_first_byte = 0;    // offset of this view inside the tensor's data (slices)
    uint64_t m_elements = 0;
    std::vector<uint64_t> m_ne;
    // MLX
    int m_mode = 0;               // MlxMode
    uint32_t m_bits = 0;
    uint64_t m_first_group = 0;
    uint64_t m_first_row = 0;
    std::shared_ptr<const std::vector<float>> m_global;   // empty: none
    uint64_t m_rows_per_global = 1;
};

}  // namespace mlens
