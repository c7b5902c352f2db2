// The kinds of storage a TensorView reads, one class each: ggml blocks (GGUF types with a ggml
// to_float), element types (one value per fixed number of bytes), and MLX groups (the packed
// entry of an Ollama/MLX quantized tensor with its scale, bias and global scale companions).
// TensorView::open picks the kind once; every read then goes straight to it. Internal to
// core/quant; tensor_view.h states the contract.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "element_decode.h"
#include "mlens/quant/tensor_view.h"

namespace mlens {

class TensorViewKind : public FloatSource {
public:
    TensorViewKind(const Model& model, size_t index, std::vector<uint64_t> ne, uint64_t elements, uint64_t block, uint64_t block_bytes);

    uint64_t size() const override { return m_elements; }
    uint64_t granularity() const override { return m_block; }
    // Checks the range; no quick range unless a kind has one.
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override;

    virtual TensorView::Kind kind() const = 0;
    virtual std::string type_name() const { return info().type.name; }
    // A copy narrowed to sub-tensor `index` of the slowest dimension (TensorView::slice checks it).
    virtual std::shared_ptr<const TensorViewKind> slice(uint64_t index) const = 0;
    // tensor_view.h: read_blocks and read_group_params; a kind without them gives E_RANGE.
    virtual Status read_blocks(uint64_t first, uint64_t count, uint8_t* out) const;
    virtual Status read_group_params(uint64_t first, uint64_t count, float* scales, float* biases) const;

    const Model& model() const { return *m_model; }
    const TensorInfo& info() const { return m_model->tensors[m_index]; }
    const std::vector<uint64_t>& shape() const { return m_ne; }
    uint64_t block_bytes() const { return m_block_bytes; }

    // Moves this view onto sub-tensor `index` of the slowest dimension (slice() on a copy).
    virtual void narrow(uint64_t index);

protected:
    // read()'s alignment rules for [first, first + count).
    Status check_read_range(uint64_t first, uint64_t count) const;
    Error range_error(const std::string& why) const;
    template <class Kind>
    static std::shared_ptr<const TensorViewKind> narrowed_copy(const Kind& kind, uint64_t index) {
        auto copy = std::make_shared<Kind>(kind);
        copy->narrow(index);
        return copy;
    }

    const Model* m_model;
    size_t m_index;
    std::vector<uint64_t> m_ne;
    uint64_t m_elements;
    uint64_t m_block;  // elements per block (group for MLX)
    uint64_t m_block_bytes;  // bytes per block
    uint64_t m_first_byte = 0;  // offset of this view inside the tensor's data (slices)
};

// Kinds whose stored blocks decode on their own: read() reads the blocks and decodes them.
class StoredBlocksKind : public TensorViewKind {
public:
    using TensorViewKind::TensorViewKind;
    Status read(uint64_t first, uint64_t count, float* out) const override;
    Status read_blocks(uint64_t first, uint64_t count, uint8_t* out) const override;
    std::vector<float> code_values() const override;
    Status read_codes(uint64_t first, uint64_t count, uint16_t* out) const override;

protected:
    // `count` values from their stored bytes.
    virtual void decode(const uint8_t* bytes, uint64_t count, float* out) const = 0;
    // Bytes of one stored code (1 or 2), or 0 when values are not stored as codes.
    uint32_t code_bytes() const { return m_block == 1 && m_block_bytes <= 2 ? static_cast<uint32_t>(m_block_bytes) : 0; }
};

// GGUF types decoded by ggml's to_float (F16 through the CPU's conversion instructions).
class GgmlBlocksKind final : public StoredBlocksKind {
public:
    GgmlBlocksKind(const Model& model, size_t index);
    TensorView::Kind kind() const override { return TensorView::Kind::ggml; }
    std::shared_ptr<const TensorViewKind> slice(uint64_t index) const override { return narrowed_copy(*this, index); }
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override;
    CodeGroups code_groups() const override;
    Status read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const override;
    uint32_t scaled_groups() const override;
    Status read_scaled_groups(uint64_t first, uint64_t count, int8_t* codes, float* steps) const override;
    OffsetGroups offset_groups() const override;
    Status read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const override;

private:
    void decode(const uint8_t* bytes, uint64_t count, float* out) const override;
};

// Element-wise types of GGUF and safetensors (element_decode.h).
class ElementKind final : public StoredBlocksKind {
public:
    ElementKind(const Model& model, size_t index, ElementType element);
    TensorView::Kind kind() const override { return TensorView::Kind::element; }
    std::shared_ptr<const TensorViewKind> slice(uint64_t index) const override { return narrowed_copy(*this, index); }
    WideKind wide_kind() const override { return wide_kind_of(m_element); }
    Status read_wide(uint64_t first, uint64_t count, long double* out) const override;

private:
    void decode(const uint8_t* bytes, uint64_t count, float* out) const override;
    ElementType m_element;
};

// The packed entry of an Ollama/MLX quantized tensor, decoded group by group (mlx_quant.h).
class MlxGroupsKind final : public TensorViewKind {
public:
    // The tensor's layout checked against its companions, and its global scale read.
    static Result<std::shared_ptr<const TensorViewKind>> open(const Model& model, size_t index);

    TensorView::Kind kind() const override { return TensorView::Kind::mlx; }
    std::string type_name() const override;
    std::shared_ptr<const TensorViewKind> slice(uint64_t index) const override { return narrowed_copy(*this, index); }
    Status read(uint64_t first, uint64_t count, float* out) const override;
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override;
    CodeGroups code_groups() const override;
    Status read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const override;
    OffsetGroups offset_groups() const override;
    Status read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const override;
    Status read_group_params(uint64_t first, uint64_t count, float* scales, float* biases) const override;

    MlxGroupsKind(const Model& model, size_t index, const QuantLayout& q, int mode);
    void narrow(uint64_t index) override;

private:
    Status read_global_scale(const QuantLayout& q);
    // The packed codes, scales and biases of whole groups from `first_group`, into per-thread buffers.
    struct Groups {
        const uint8_t* packed;
        const float* scales;
        const float* biases;
    };
    Result<Groups> read_groups(uint64_t first_group, uint64_t groups) const;
    Status read_companion(size_t index, uint64_t first, uint64_t count, float* out) const;

    int m_mode;  // MlxMode
    uint32_t m_bits;
    uint64_t m_first_group = 0;
    uint64_t m_first_row = 0;
    std::shared_ptr<const std::vector<float>> m_global;  // empty: none
    uint64_t m_rows_per_global = 1;
};

}  // namespace mlens
