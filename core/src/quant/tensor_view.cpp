#include "mlens/quant/tensor_view.h"

#include <ggml.h>

#include <algorithm>
#include <bit>
#include <vector>

#include "block_range.h"
#include "element_decode.h"
#include "mlens/formats/gguf_byte_order.h"
#include "mlens/io/checked_math.h"
#include "mlens/quant/mlx_quant.h"

namespace mlens {

namespace {

// Largest read whose byte buffer a thread keeps for its next read.
constexpr uint64_t kKeptReadBytes = 16u << 20;

Error unsupported(const TensorInfo& t, const std::string& why) { return Error{ErrorCode::E_UNSUPPORTED_TYPE, t.name, std::nullopt, why}; }

}  // namespace

TensorView::TensorView(const Model& model, size_t index) : m_model(&model), m_index(index) {}

Result<TensorView> TensorView::open(const Model& model, const std::string& name) {
    for (size_t i = 0; i < model.tensors.size(); ++i)
        if (model.tensors[i].name == name) return open(model, i);
    return Error{ErrorCode::E_NOT_FOUND, "tensor", std::nullopt, "no tensor named " + name};
}

Result<TensorView> TensorView::open(const Model& model, size_t index) {
    if (index >= model.tensors.size()) return Error{ErrorCode::E_NOT_FOUND, "tensor", std::nullopt, "no such tensor"};
    const TensorInfo& t = model.tensors[index];
    TensorView v(model, index);
    v.m_ne = t.ne;
    v.m_elements = t.n_elements;
    if (t.quant) {
        if (Status s = v.open_mlx(); !s) return s.error();
        return v;
    }
    if (!t.type.known || !t.n_bytes) return unsupported(t, "cannot decode type " + t.type.name);
    if (model.format == Format::gguf && t.file < model.files.size() && model.files[t.file].big_endian &&
        !has_big_endian_layout(t.type.id))
        return Error{ErrorCode::E_BIG_ENDIAN_TYPE, t.name, std::nullopt, big_endian_refusal(t.type.name)};
    if (model.format == Format::gguf && ggml_get_type_traits(static_cast<ggml_type>(t.type.id))->to_float) {
        v.m_kind = Kind::ggml;
        v.m_block = t.type.block_size;
        v.m_block_bytes = t.type.block_bytes;
        return v;
    }
    auto element = element_type_of(model.format, t.type);
    if (!element) return unsupported(t, "cannot decode " + std::string(format_name(model.format)) + " type " + t.type.name);
    v.m_kind = Kind::element;
    v.m_element = static_cast<int>(*element);
    v.m_block = 1;
    v.m_block_bytes = element_bytes(*element);
    if (*t.n_bytes != t.n_elements * v.m_block_bytes)
        return Error{ErrorCode::E_SHAPE, t.name, std::nullopt, "byte size does not match the shape"};
    return v;
}

Status TensorView::open_mlx() {
    const TensorInfo& t = info();
    const QuantLayout& q = *t.quant;
    auto mode = mlx_mode_from_name(q.mode);
    if (!mode) return unsupported(t, "quantization \"" + q.type + "\" is unknown (" + q.origin + ")");
    const uint32_t want_bits = *mode == MlxMode::mxfp8 ? 8 : 4;
    if ((*mode != MlxMode::affine && q.bits != want_bits) || (q.bits != 4 && q.bits != 8))
        return unsupported(t, std::to_string(q.bits) + "-bit values cannot be " + q.mode);
    if (q.group_size == 0 || q.group_size * q.bits % 32 != 0 || q.logical_ne.empty() || q.logical_elements == 0 ||
        q.logical_ne[0] % q.group_size != 0)
        return Error{ErrorCode::E_SHAPE, t.name, std::nullopt, "rows of " + std::to_string(q.logical_ne.empty() ? 0 : q.logical_ne[0]) +
                     " values do not split into groups of " + std::to_string(q.group_size)};
    auto packed_bytes = checked_mul(q.logical_elements, q.bits);
    if (!packed_bytes || !t.n_bytes || *t.n_bytes != *packed_bytes / 8)
        return Error{ErrorCode::E_SHAPE, t.name, std::nullopt, "packed bytes do not match the logical shape"};
    const uint64_t groups = q.logical_elements / q.group_size;
    auto companion = [&](std::optional<size_t> index, const char* what, bool one_byte) -> Status {
        if (!index || *index >= m_model->tensors.size()) return unsupported(t, std::string("the ") + what + " tensor is missing");
        const TensorInfo& c = m_model->tensors[*index];
        auto e = element_type_of(m_model->format, c.type);
        if (!e || (one_byte && element_bytes(*e) != 1) || !c.n_bytes || *c.n_bytes != c.n_elements * element_bytes(*e))
            return unsupported(t, std::string("the ") + what + " dtype " + c.type.name + " cannot be used");
        if (c.n_elements != groups)
            return Error{ErrorCode::E_SHAPE, t.name, std::nullopt, std::string("the ") + what + " has " + std::to_string(c.n_elements) +
                         " values for " + std::to_string(groups) + " groups"};
        return ok_status();
    };
    if (Status s = companion(q.scale, "scale", *mode != MlxMode::affine); !s) return s;
    if (*mode == MlxMode::affine)
        if (Status s = companion(q.bias, "bias", false); !s) return s;
    m_kind = Kind::mlx;
    m_mode = static_cast<int>(*mode);
    m_bits = q.bits;
    m_block = q.group_size;
    m_block_bytes = q.group_size * q.bits / 8;
    m_ne = q.logical_ne;
    m_elements = q.logical_elements;
    if (!q.global_scale) return ok_status();
    const TensorInfo& g = m_model->tensors[*q.global_scale];
    auto e = element_type_of(m_model->format, g.type);
    const uint64_t rows = m_elements / m_ne[0], lead = m_ne.back();
    if (!e || !g.n_bytes || *g.n_bytes != g.n_elements * element_bytes(*e))
        return unsupported(t, "the global scale dtype " + g.type.name + " cannot be used");
    if (g.n_elements == 1) m_rows_per_global = rows;
    else if (g.n_elements == rows) m_rows_per_global = 1;
    else if (g.n_elements == lead && m_ne.size() > 1) m_rows_per_global = rows / lead;
    else
        return Error{ErrorCode::E_SHAPE, t.name, std::nullopt, "the global scale has " + std::to_string(g.n_elements) + " values for " +
                     std::to_string(rows) + " rows"};
    std::vector<uint8_t> bytes(*g.n_bytes);
    if (Status s = m_model->read_tensor_bytes(*q.global_scale, 0, bytes.size(), bytes.data()); !s) return s;
    auto values = std::make_shared<std::vector<float>>(g.n_elements);
    decode_elements(*e, bytes.data(), g.n_elements, values->data());
    m_global = std::move(values);
    return ok_status();
}

std::string TensorView::type_name() const {
    if (m_kind != Kind::mlx) return info().type.name;
    return info().quant->type + " g" + std::to_string(m_block);
}

Result<TensorView> TensorView::slice(uint64_t index) const {
    const uint64_t outer = m_ne.empty() ? 1 : m_ne.back();
    if (index >= outer || outer == 0)
        return Error{ErrorCode::E_RANGE, info().name, std::nullopt, "slice " + std::to_string(index) + " of " + std::to_string(outer)};
    if ((m_elements / outer) % m_block != 0)
        return Error{ErrorCode::E_RANGE, info().name, std::nullopt, "a slice would split a block"};
    TensorView v = *this;
    v.m_elements = m_elements / outer;
    if (v.m_ne.size() > 1) v.m_ne.pop_back();
    const uint64_t blocks = v.m_elements / m_block;
    v.m_first_byte = m_first_byte + index * blocks * m_block_bytes;
    v.m_first_group = m_first_group + index * blocks;
    v.m_first_row = m_first_row + index * (v.m_elements / row_length());
    return v;
}

Status TensorView::read_blocks(uint64_t first, uint64_t count, uint8_t* out) const {
    const uint64_t n_blocks = (m_elements + m_block - 1) / m_block;
    if (m_kind == Kind::mlx || first > n_blocks || count > n_blocks - first)
        return Error{ErrorCode::E_RANGE, info().name, std::nullopt, "blocks out of range"};
    return m_model->read_tensor_bytes(m_index, m_first_byte + first * m_block_bytes, count * m_block_bytes, out);
}

Status TensorView::read_companion(size_t index, uint64_t first, uint64_t count, float* out) const {
    const TensorInfo& c = m_model->tensors[index];
    ElementType e = *element_type_of(m_model->format, c.type);
    const uint32_t width = element_bytes(e);
    thread_local std::vector<uint8_t> bytes;
    bytes.resize(count * width);
    if (Status s = m_model->read_tensor_bytes(index, first * width, bytes.size(), bytes.data()); !s) return s;
    auto mode = static_cast<MlxMode>(m_mode);
    if (mode == MlxMode::affine) decode_elements(e, bytes.data(), count, out);
    else
        for (uint64_t i = 0; i < count; ++i) out[i] = mlx_fp_scale(mode, bytes[i]);
    return ok_status();
}

Status TensorView::read_group_params(uint64_t first, uint64_t count, float* scales, float* biases) const {
    const uint64_t groups = m_elements / m_block;
    if (m_kind != Kind::mlx || first > groups || count > groups - first)
        return Error{ErrorCode::E_RANGE, info().name, std::nullopt, "groups out of range"};
    const QuantLayout& q = *info().quant;
    if (Status s = read_companion(*q.scale, m_first_group + first, count, scales); !s) return s;
    if (!biases) return ok_status();
    if (static_cast<MlxMode>(m_mode) != MlxMode::affine) {
        std::fill(biases, biases + count, 0.0f);
        return ok_status();
    }
    return read_companion(*q.bias, m_first_group + first, count, biases);
}

Result<TensorView::MlxGroups> TensorView::read_mlx_groups(uint64_t first_group, uint64_t groups) const {
    // Per-thread buffers, as in read(): chunk after chunk reuses their pages.
    thread_local std::vector<uint8_t> packed;
    thread_local std::vector<float> scales, biases;
    packed.resize(groups * m_block_bytes);
    scales.resize(groups);
    biases.resize(groups);
    if (Status s = m_model->read_tensor_bytes(m_index, m_first_byte + first_group * m_block_bytes, packed.size(), packed.data()); !s)
        return s.error();
    if (Status s = read_group_params(first_group, groups, scales.data(), biases.data()); !s) return s.error();
    return MlxGroups{packed.data(), scales.data(), biases.data()};
}

Status TensorView::read_mlx(uint64_t first, uint64_t count, float* out) const {
    const uint64_t groups = count / m_block;
    auto g = read_mlx_groups(first / m_block, groups);
    if (!g) return g.error();
    mlx_dequantize(static_cast<MlxMode>(m_mode), m_bits, m_block, g->packed, g->scales, g->biases, groups, out);
    if (!m_global) return ok_status();
    const uint64_t row = row_length();
    for (uint64_t i = 0; i < count;) {
        const uint64_t r = (first + i) / row, end = std::min(count, (r + 1) * row - first);
        const float g = (*m_global)[(m_first_row + r) / m_rows_per_global];
        for (; i < end; ++i) out[i] *= g;
    }
    return ok_status();
}

Status TensorView::check_read_range(uint64_t first, uint64_t count) const {
    if (first % m_block != 0 || first > m_elements || count > m_elements - first ||
        (count % m_block != 0 && first + count != m_elements))
        return Error{ErrorCode::E_RANGE, info().name, std::nullopt, "read not aligned to the type's blocks"};
    return ok_status();
}

Result<std::optional<ValueBounds>> TensorView::quick_range(uint64_t first, uint64_t count) const {
    if (Status s = check_read_range(first, count); !s) return s.error();
    const uint64_t blocks = (count + m_block - 1) / m_block;
    if (m_kind == Kind::ggml && has_block_value_range(info().type.id)) {
        thread_local std::vector<uint8_t> bytes;
        bytes.resize(blocks * m_block_bytes);
        if (Status s = read_blocks(first / m_block, blocks, bytes.data()); !s) return s.error();
        return block_value_range(info().type.id, bytes.data(), blocks);
    }
    if (m_kind == Kind::mlx && static_cast<MlxMode>(m_mode) == MlxMode::affine && !m_global) {
        auto g = read_mlx_groups(first / m_block, blocks);
        if (!g) return g.error();
        return mlx_affine_range(m_bits, m_block, g->packed, g->scales, g->biases, blocks);
    }
    return std::optional<ValueBounds>{};
}

Status TensorView::read(uint64_t first, uint64_t count, float* out) const {
    if (Status s = check_read_range(first, count); !s) return s;
    if (m_kind == Kind::mlx) return read_mlx(first, count, out);
    // One read per request (a system call each), into a per-thread buffer that keeps its pages
    // (requests of chunk size; a larger one gets a buffer of its own).
    const uint64_t blocks = (count + m_block - 1) / m_block;
    thread_local std::vector<uint8_t> kept;
    std::vector<uint8_t> own;
    std::vector<uint8_t>& bytes = blocks * m_block_bytes <= kKeptReadBytes ? kept : own;
    bytes.resize(blocks * m_block_bytes);
    if (Status s = read_blocks(first / m_block, blocks, bytes.data()); !s) return s;
    decode(bytes.data(), count, out);
    return ok_status();
}

WideKind TensorView::wide_kind() const {
    return m_kind == Kind::element ? wide_kind_of(static_cast<ElementType>(m_element)) : WideKind::none;
}

Status TensorView::read_wide(uint64_t first, uint64_t count, long double* out) const {
    if (wide_kind() == WideKind::none) return FloatSource::read_wide(first, count, out);
    if (Status s = check_read_range(first, count); !s) return s;
    thread_local std::vector<uint8_t> bytes;
    bytes.resize(count * m_block_bytes);
    if (Status s = read_blocks(first, count, bytes.data()); !s) return s;
    decode_wide_elements(static_cast<ElementType>(m_element), bytes.data(), count, out);
    return ok_status();
}

void TensorView::decode(const uint8_t* bytes, uint64_t count, float* out) const {
    if (m_kind == Kind::ggml && info().type.id == GGML_TYPE_F16)
        decode_elements(ElementType::f16, bytes, count, out);
    else if (m_kind == Kind::ggml)
        ggml_get_type_traits(static_cast<ggml_type>(info().type.id))->to_float(bytes, out, static_cast<int64_t>(count));
    else
        decode_elements(static_cast<ElementType>(m_element), bytes, count, out);
}

uint32_t TensorView::code_bytes() const {
    return m_kind != Kind::mlx && m_block == 1 && m_block_bytes <= 2 ? static_cast<uint32_t>(m_block_bytes) : 0;
}

std::vector<float> TensorView::code_values() const {
    const uint32_t width = code_bytes();
    if (width == 0) return {};
    const uint32_t codes = 1u << (8 * width);
    std::vector<uint8_t> bytes(static_cast<size_t>(codes) * width);
    for (uint32_t c = 0; c < codes; ++c)
        for (uint32_t b = 0; b < width; ++b) bytes[c * width + b] = static_cast<uint8_t>(c >> (8 * b));
    std::vector<float> values(codes);
    decode(bytes.data(), codes, values.data());
    return values;
}

Status TensorView::read_codes(uint64_t first, uint64_t count, uint16_t* out) const {
    const uint32_t width = code_bytes();
    if (width == 0) return FloatSource::read_codes(first, count, out);
    if (width == 2) {
        if (Status s = read_blocks(first, count, reinterpret_cast<uint8_t*>(out)); !s) return s;
        if constexpr (std::endian::native == std::endian::big)
            for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<uint16_t>(out[i] << 8 | out[i] >> 8);
        return ok_status();
    }
    // One-byte codes, read into the back half of `out` and widened from the front.
    auto* bytes = reinterpret_cast<uint8_t*>(out) + count;
    if (Status s = read_blocks(first, count, bytes); !s) return s;
    for (uint64_t i = 0; i < count; ++i) out[i] = bytes[i];
    return ok_status();
}

}  // namespace mlens
