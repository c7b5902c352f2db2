// TensorView: one logical tensor of a Model, decoded to float on demand.
//
// Contract:
//  - GGUF tensors of every type the pinned ggml knows decode through ggml's own to_float (so the
//    values are bit-exact with llama.cpp's); I8/I16/I32/I64 and F64, which ggml has no to_float
//    for, are converted here. Unknown types fail to open with E_UNSUPPORTED_TYPE naming the type;
//    they never crash.
//  - slice(outer, index) narrows the view to one index of the slowest dimension (one expert of a
//    stacked [experts, out, in] tensor), without reading the others.
//  - Reads go through Model::read_tensor_bytes, so a tensor whose bytes are missing from the file
//    gives an E_IO error, never an out-of-bounds read.
#pragma once

#include <cstdint>
#include <string>

#include "mlens/model/model.h"
#include "mlens/quant/float_source.h"

namespace mlens {

class TensorView final : public FloatSource {
public:
    static Result<TensorView> open(const Model& model, size_t tensor_index);
    static Result<TensorView> open(const Model& model, const std::string& tensor_name);

    // The sub-tensor at `index` of the slowest-varying dimension.
    Result<TensorView> slice(uint64_t index) const;

    uint64_t size() const override { return m_elements; }
    uint64_t granularity() const override { return m_block; }
    Status read(uint64_t first, uint64_t count, float* out) const override;

    const TensorInfo& info() const { return m_model->tensors[m_index]; }
    uint64_t row_length() const { return info().ne.empty() ? 1 : info().ne[0]; }
    uint64_t block_bytes() const { return m_block_bytes; }

private:
    TensorView(const Model& model, size_t index);

    const Model* m_model;
    size_t m_index;
    uint64_t m_block = 1;         // elements per block
    uint64_t m_block_bytes = 4;   // bytes per block
    uint64_t m_first_byte = 0;    // offset of this view inside the tensor's data (slices)
    uint64_t m_elements = 0;
};

}  // namespace mlens
