#include "mlens/quant/tensor_view.h"

#include <ggml.h>

#include <cstring>
#include <vector>

namespace mlens {

namespace {

// Types ggml stores but has no to_float for (F32 is stored as is).
bool is_plain_type(uint32_t type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_I8 || type == GGML_TYPE_I16 || type == GGML_TYPE_I32 || type == GGML_TYPE_I64 ||
           type == GGML_TYPE_F64;
}

bool convert_plain(uint32_t type, const uint8_t* in, uint64_t count, float* out) {
    auto each = [&](auto tag) {
        using T = decltype(tag);
        for (uint64_t i = 0; i < count; ++i) {
            T v;
            std::memcpy(&v, in + i * sizeof(T), sizeof(T));
            out[i] = static_cast<float>(v);
        }
        return true;
    };
    switch (type) {
        case GGML_TYPE_F32: return each(float{});
        case GGML_TYPE_I8: return each(int8_t{});
        case GGML_TYPE_I16: return each(int16_t{});
        case GGML_TYPE_I32: return each(int32_t{});
        case GGML_TYPE_I64: return each(int64_t{});
        case GGML_TYPE_F64: return each(double{});
        default: return false;
    }
}

}  // namespace

TensorView::TensorView(const Model& model, size_t index) : m_model(&model), m_index(index) {}

Result<TensorView> TensorView::open(const Model& model, const std::string& name) {
    for (size_t i = 0; i < model.tensors.size(); ++i)
        if (model.tensors[i].name == name) return open(model, i);
    return Error{"E_NOT_FOUND", "tensor", std::nullopt, "no tensor named " + name};
}

Result<TensorView> TensorView::open(const Model& model, size_t index) {
    if (index >= model.tensors.size()) return Error{"E_NOT_FOUND", "tensor", std::nullopt, "no such tensor"};
    const TensorInfo& t = model.tensors[index];
    if (model.format != Format::gguf || !t.type.known || !t.n_bytes)
        return Error{"E_UNSUPPORTED_TYPE", t.name, std::nullopt, "cannot decode type " + t.type.name};
    auto type = static_cast<ggml_type>(t.type.id);
    if (!ggml_get_type_traits(type)->to_float && !is_plain_type(t.type.id))
        return Error{"E_UNSUPPORTED_TYPE", t.name, std::nullopt, "cannot decode type " + t.type.name};
    TensorView v(model, index);
    v.m_block = t.type.block_size;
    v.m_block_bytes = t.type.block_bytes;
    v.m_elements = t.n_elements;
    return v;
}

Result<TensorView> TensorView::slice(uint64_t index) const {
    const TensorInfo& t = info();
    uint64_t outer = t.ne.empty() ? 1 : t.ne.back();
    if (index >= outer || outer == 0)
        return Error{"E_RANGE", t.name, std::nullopt, "slice " + std::to_string(index) + " of " + std::to_string(outer)};
    TensorView v = *this;
    v.m_elements = m_elements / outer;
    v.m_first_byte = m_first_byte + index * (v.m_elements / m_block) * m_block_bytes;
    return v;
}

Status TensorView::read(uint64_t first, uint64_t count, float* out) const {
    if (first % m_block != 0 || first > m_elements || count > m_elements - first ||
        (count % m_block != 0 && first + count != m_elements))
        return Error{"E_RANGE", info().name, std::nullopt, "read not aligned to the type's blocks"};
    uint64_t blocks = (count + m_block - 1) / m_block;
    std::vector<uint8_t> bytes(blocks * m_block_bytes);
    uint64_t offset = m_first_byte + first / m_block * m_block_bytes;
    if (Status s = m_model->read_tensor_bytes(m_index, offset, bytes.size(), bytes.data()); !s) return s;
    auto type = static_cast<ggml_type>(info().type.id);
    if (auto to_float = ggml_get_type_traits(type)->to_float) to_float(bytes.data(), out, static_cast<int64_t>(count));
    else convert_plain(info().type.id, bytes.data(), count, out);
    return ok_status();
}

}  // namespace mlens
