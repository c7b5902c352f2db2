// The TensorView kind of an Ollama/MLX quantized tensor: packed codes decoded group by group with
// their scale, bias and global scale companions (mlx_quant.h).
#include <algorithm>

#include "mlens/io/checked_math.h"
#include "mlens/quant/mlx_quant.h"
#include "mlens/util/analysis_memory.h"
#include "tensor_view_kinds.h"
#include "util/thread_scratch.h"

namespace mlens {

namespace {

Error unsupported(const TensorInfo& t, const std::string& why) { return Error{ErrorCode::E_UNSUPPORTED_TYPE, t.name, std::nullopt, why}; }

Error shape_error(const TensorInfo& t, const std::string& why) { return Error{ErrorCode::E_SHAPE, t.name, std::nullopt, why}; }

}  // namespace

MlxGroupsKind::MlxGroupsKind(const Model& model, size_t index, const QuantLayout& q, int mode)
    : TensorViewKind(model, index, q.logical_ne, q.logical_elements, q.group_size, q.group_size * q.bits / 8),
      m_mode(mode),
      m_bits(q.bits) {}

Result<std::shared_ptr<const TensorViewKind>> MlxGroupsKind::open(const Model& model, size_t index) {
    const TensorInfo& t = model.tensors[index];
    const QuantLayout& q = *t.quant;
    auto mode = mlx_mode_from_name(q.mode);
    if (!mode) return unsupported(t, "quantization \"" + q.type + "\" is unknown (" + q.origin + ")");
    const uint32_t want_bits = *mode == MlxMode::mxfp8 ? 8 : 4;
    if ((*mode != MlxMode::affine && q.bits != want_bits) || (q.bits != 4 && q.bits != 8))
        return unsupported(t, std::to_string(q.bits) + "-bit values cannot be " + q.mode);
    if (q.group_size == 0 || q.group_size * q.bits % 32 != 0 || q.logical_ne.empty() || q.logical_elements == 0 ||
        q.logical_ne[0] % q.group_size != 0)
        return shape_error(t,
                           "rows of " + std::to_string(q.logical_ne.empty() ? 0 : q.logical_ne[0]) +
                               " values do not split into groups of " + std::to_string(q.group_size));
    auto packed_bytes = checked_mul(q.logical_elements, q.bits);
    if (!packed_bytes || !t.n_bytes || *t.n_bytes != *packed_bytes / 8)
        return shape_error(t, "packed bytes do not match the logical shape");
    const uint64_t groups = q.logical_elements / q.group_size;
    auto companion = [&](std::optional<size_t> c_index, const char* what, bool one_byte) -> Status {
        if (!c_index || *c_index >= model.tensors.size()) return unsupported(t, std::string("the ") + what + " tensor is missing");
        const TensorInfo& c = model.tensors[*c_index];
        auto e = element_type_of(model.format, c.type);
        if (!e || (one_byte && element_bytes(*e) != 1) || !c.n_bytes || *c.n_bytes != c.n_elements * element_bytes(*e))
            return unsupported(t, std::string("the ") + what + " dtype " + c.type.name + " cannot be used");
        if (c.n_elements != groups)
            return shape_error(
                t,
                std::string("the ") + what + " has " + std::to_string(c.n_elements) + " values for " + std::to_string(groups) + " groups");
        return ok_status();
    };
    if (Status s = companion(q.scale, "scale", *mode != MlxMode::affine); !s) return s.error();
    if (*mode == MlxMode::affine)
        if (Status s = companion(q.bias, "bias", false); !s) return s.error();
    auto kind = std::make_shared<MlxGroupsKind>(model, index, q, static_cast<int>(*mode));
    if (q.global_scale)
        if (Status s = kind->read_global_scale(q); !s) return s.error();
    return std::shared_ptr<const TensorViewKind>(std::move(kind));
}

Status MlxGroupsKind::read_global_scale(const QuantLayout& q) {
    const TensorInfo& t = info();
    const TensorInfo& g = m_model->tensors[*q.global_scale];
    auto e = element_type_of(m_model->format, g.type);
    const uint64_t rows = m_elements / m_ne[0], lead = m_ne.back();
    if (!e || !g.n_bytes || *g.n_bytes != g.n_elements * element_bytes(*e))
        return unsupported(t, "the global scale dtype " + g.type.name + " cannot be used");
    if (g.n_elements == 1)
        m_rows_per_global = rows;
    else if (g.n_elements == rows)
        m_rows_per_global = 1;
    else if (g.n_elements == lead && m_ne.size() > 1)
        m_rows_per_global = rows / lead;
    else
        return shape_error(t, "the global scale has " + std::to_string(g.n_elements) + " values for " + std::to_string(rows) + " rows");
    // The global scale is kept decoded beside the view: a part of the analysis bound at most.
    if (g.n_elements > kAnalysisMemoryBound / 4 / sizeof(float))
        return Error{ErrorCode::E_LIMIT, t.name, std::nullopt,
                     "the global scale has " + std::to_string(g.n_elements) + " values, more than the " +
                         std::to_string(kAnalysisMemoryBound / 4 / sizeof(float)) + " a view keeps"};
    if (Status held = m_model->check_tensor_data(*q.global_scale); !held) return held;
    std::vector<uint8_t> bytes(*g.n_bytes);
    if (Status s = m_model->read_tensor_bytes(*q.global_scale, 0, bytes.size(), bytes.data()); !s) return s;
    auto values = std::make_shared<std::vector<float>>(g.n_elements);
    decode_elements(*e, bytes.data(), g.n_elements, values->data());
    m_global = std::move(values);
    return ok_status();
}

std::string MlxGroupsKind::type_name() const { return info().quant->type + " g" + std::to_string(m_block); }

void MlxGroupsKind::narrow(uint64_t index) {
    const uint64_t row = m_ne.empty() ? 1 : m_ne[0];
    TensorViewKind::narrow(index);
    m_first_group += index * (m_elements / m_block);
    m_first_row += index * (m_elements / row);
}

Status MlxGroupsKind::read_companion(size_t index, uint64_t first, uint64_t count, float* out) const {
    const TensorInfo& c = m_model->tensors[index];
    ElementType e = *element_type_of(m_model->format, c.type);
    const uint32_t width = element_bytes(e);
    std::vector<uint8_t>& bytes = thread_scratch<std::vector<uint8_t>>([] {});
    bytes.resize(count * width);
    if (Status s = m_model->read_tensor_bytes(index, first * width, bytes.size(), bytes.data()); !s) return s;
    auto mode = static_cast<MlxMode>(m_mode);
    if (mode == MlxMode::affine)
        decode_elements(e, bytes.data(), count, out);
    else
        for (uint64_t i = 0; i < count; ++i) out[i] = mlx_fp_scale(mode, bytes[i]);
    return ok_status();
}

Status MlxGroupsKind::read_group_params(uint64_t first, uint64_t count, float* scales, float* biases) const {
    const uint64_t groups = m_elements / m_block;
    if (first > groups || count > groups - first) return range_error("groups out of range");
    const QuantLayout& q = *info().quant;
    if (Status s = read_companion(*q.scale, m_first_group + first, count, scales); !s) return s;
    if (!biases) return ok_status();
    if (static_cast<MlxMode>(m_mode) != MlxMode::affine) {
        std::fill(biases, biases + count, 0.0f);
        return ok_status();
    }
    return read_companion(*q.bias, m_first_group + first, count, biases);
}

Result<MlxGroupsKind::Groups> MlxGroupsKind::read_groups(uint64_t first_group, uint64_t groups) const {
    // Per-thread buffers, as in read(): chunk after chunk reuses their pages.
    std::vector<uint8_t>& packed = thread_scratch<std::vector<uint8_t>>([] {});
    std::vector<float>& scales = thread_scratch<std::vector<float>>([] {});
    std::vector<float>& biases = thread_scratch<std::vector<float>>([] {});
    packed.resize(groups * m_block_bytes);
    scales.resize(groups);
    biases.resize(groups);
    if (Status s = m_model->read_tensor_bytes(m_index, m_first_byte + first_group * m_block_bytes, packed.size(), packed.data()); !s)
        return s.error();
    if (Status s = read_group_params(first_group, groups, scales.data(), biases.data()); !s) return s.error();
    return Groups{packed.data(), scales.data(), biases.data()};
}

Status MlxGroupsKind::read(uint64_t first, uint64_t count, float* out) const {
    if (Status s = check_read_range(first, count); !s) return s;
    const uint64_t groups = count / m_block;
    auto g = read_groups(first / m_block, groups);
    if (!g) return g.error();
    mlx_dequantize(static_cast<MlxMode>(m_mode), m_bits, m_block, g->packed, g->scales, g->biases, groups, out);
    if (!m_global) return ok_status();
    const uint64_t row = m_ne.empty() ? 1 : m_ne[0];
    for (uint64_t i = 0; i < count;) {
        const uint64_t r = (first + i) / row, end = std::min(count, (r + 1) * row - first);
        const float scale = (*m_global)[(m_first_row + r) / m_rows_per_global];
        for (; i < end; ++i) out[i] *= scale;
    }
    return ok_status();
}

Result<std::optional<ValueBounds>> MlxGroupsKind::quick_range(uint64_t first, uint64_t count) const {
    if (static_cast<MlxMode>(m_mode) != MlxMode::affine || m_global) return TensorViewKind::quick_range(first, count);
    if (Status s = check_read_range(first, count); !s) return s.error();
    const uint64_t groups = (count + m_block - 1) / m_block;
    auto g = read_groups(first / m_block, groups);
    if (!g) return g.error();
    return mlx_affine_range(m_bits, m_block, g->packed, g->scales, g->biases, groups);
}

// Groups of more than 255 values are not code groups: one code may fill such a group, more times
// than the statistics' per-group counts (bytes) hold.
CodeGroups MlxGroupsKind::code_groups() const {
    if (static_cast<MlxMode>(m_mode) != MlxMode::affine || m_bits != 4 || m_global || m_block < 16 || m_block > 255) return {};
    return {16, static_cast<uint32_t>(m_block)};
}

Status MlxGroupsKind::read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const {
    if (code_groups().codes == 0) return TensorViewKind::read_code_groups(first, count, codes, values);
    if (Status s = check_read_range(first, count); !s) return s;
    const uint64_t groups = count / m_block;
    auto g = read_groups(first / m_block, groups);
    if (!g) return g.error();
    mlx_affine4_code_groups(m_block, g->packed, g->scales, g->biases, groups, codes, values);
    return ok_status();
}

}  // namespace mlens

namespace mlens {

OffsetGroups MlxGroupsKind::offset_groups() const {
    if (static_cast<MlxMode>(m_mode) != MlxMode::affine || m_bits != 8 || m_global) return {};
    return {static_cast<uint32_t>(m_block), 256};
}

Status MlxGroupsKind::read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const {
    if (offset_groups().length == 0) return TensorViewKind::read_offset_groups(first, count, codes, steps, offsets);
    if (Status s = check_read_range(first, count); !s) return s;
    // 8-bit codes are a byte each, in value order, read straight into `codes`; the value is
    // code * scale + bias (mlx_quant.h).
    const uint64_t groups = count / m_block;
    if (Status s = m_model->read_tensor_bytes(m_index, m_first_byte + first / m_block * m_block_bytes, groups * m_block_bytes, codes); !s)
        return s;
    return read_group_params(first / m_block, groups, steps, offsets);
}

}  // namespace mlens
