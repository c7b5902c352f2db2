#include "mlens/compat/data_ops.h"

#include <cmath>
#include <cstring>

#include "mlens/formats/ggml_types.h"
#include "mlens/quant/tensor_view.h"

namespace mlens::compat {

namespace {

constexpr uint32_t kF32 = 0;
constexpr uint32_t kF16 = 1;

class OpRunner {
public:
    OpRunner(const Model& model, const DataOp& op) : m_model(model), m_op(op) {}

    Error fail(const std::string& why) const {
        std::string dest = m_op.dest < m_model.tensors.size() ? m_model.tensors[m_op.dest].name : "?";
        return Error{ErrorCode::E_DATA_OP, "tensors[" + std::to_string(m_op.dest) + "]", std::nullopt,
                     std::string(data_op_name(m_op.op)) + " for slot of " + dest + ": " + why};
    }

    Result<std::vector<uint8_t>> stored(size_t slot) const {
        if (slot >= m_model.tensors.size()) return fail("source slot out of range");
        const TensorInfo& t = m_model.tensors[slot];
        if (!t.n_bytes) return fail("source " + t.name + " has an unknown size");
        if (Status held = m_model.check_tensor_data(slot); !held) return held.error();
        std::vector<uint8_t> out(*t.n_bytes);
        Status s = m_model.read_tensor_bytes(slot, 0, out.size(), out.data());
        if (!s) return s.error();
        return out;
    }

    Result<std::vector<float>> decoded(size_t slot) const {
        if (slot >= m_model.tensors.size()) return fail("source slot out of range");
        auto view = TensorView::open(m_model, slot);
        if (!view) return view.error();
        if (Status held = m_model.check_tensor_data(slot); !held) return held.error();
        std::vector<float> out(view->size());
        Status s = view->read(0, out.size(), out.data());
        if (!s) return s.error();
        return out;
    }

    Result<std::vector<uint8_t>> run(uint64_t dest_bytes) const {
        switch (m_op.op) {
            case DataOpKind::byte_concat:
                return concat(dest_bytes);
            case DataOpKind::concat_to_f32:
                return concat_f32(dest_bytes);
            case DataOpKind::f16_to_f32:
            case DataOpKind::dequant_to_f32:
            case DataOpKind::norm_plus_one:
                return convert(dest_bytes);
            case DataOpKind::interleave_experts:
                return interleave(dest_bytes);
            case DataOpKind::rope_permute_rows:
                return permute(dest_bytes);
            case DataOpKind::zero_fill:
                return std::vector<uint8_t>(dest_bytes, 0);
            case DataOpKind::patch_split:
                return patch_split(dest_bytes);
            case DataOpKind::pos_embd_resample:
                return resample(dest_bytes);
        }
        return fail("unknown operation");
    }

private:
    static std::vector<uint8_t> as_bytes(const std::vector<float>& f) {
        std::vector<uint8_t> out(f.size() * 4);
        if (!out.empty()) std::memcpy(out.data(), f.data(), out.size());
        return out;
    }

    Result<std::vector<uint8_t>> sized(std::vector<uint8_t> out, uint64_t dest_bytes) const {
        if (out.size() != dest_bytes)
            return fail("produces " + std::to_string(out.size()) + " bytes, the destination holds " + std::to_string(dest_bytes));
        return out;
    }

    bool need_sources(size_t n) const { return m_op.sources.size() >= n; }

    Result<std::vector<uint8_t>> concat(uint64_t dest_bytes) const {
        std::vector<uint8_t> out;
        for (size_t src : m_op.sources) {
            auto b = stored(src);
            if (!b) return b.error();
            if (m_model.tensors[src].type.id != m_op.dest_type)
                return fail("source " + m_model.tensors[src].name + " is " + m_model.tensors[src].type.name +
                            ", not the destination's type");
            out.insert(out.end(), b->begin(), b->end());
        }
        return sized(std::move(out), dest_bytes);
    }

    Result<std::vector<uint8_t>> concat_f32(uint64_t dest_bytes) const {
        if (m_op.dest_type != kF32) return fail("destination is not F32");
        std::vector<float> all;
        for (size_t src : m_op.sources) {
            auto f = decoded(src);
            if (!f) return f.error();
            all.insert(all.end(), f->begin(), f->end());
        }
        return sized(as_bytes(all), dest_bytes);
    }

    Result<std::vector<uint8_t>> convert(uint64_t dest_bytes) const {
        if (!need_sources(1) || m_op.dest_type != kF32) return fail("needs one source and an F32 destination");
        if (m_op.op == DataOpKind::f16_to_f32 && m_model.tensors[m_op.sources[0]].type.id != kF16) return fail("source is not F16");
        auto f = decoded(m_op.sources[0]);
        if (!f) return f.error();
        if (m_op.op == DataOpKind::norm_plus_one)
            for (float& x : *f) x += 1.0f;
        return sized(as_bytes(*f), dest_bytes);
    }

    Result<std::vector<uint8_t>> interleave(uint64_t dest_bytes) const {
        if (!need_sources(2) || m_op.params.empty() || m_op.params[0] <= 0) return fail("needs {gate, up} and n_expert > 0");
        auto gate = stored(m_op.sources[0]);
        if (!gate) return gate.error();
        auto up = stored(m_op.sources[1]);
        if (!up) return up.error();
        const auto n = static_cast<uint64_t>(m_op.params[0]);
        if (gate->size() != up->size() || gate->size() % n != 0)
            return fail("gate and up sizes differ or do not split into n_expert parts");
        const uint64_t part = gate->size() / n;
        std::vector<uint8_t> out;
        out.reserve(gate->size() * 2);
        for (uint64_t e = 0; e < n; ++e) {
            out.insert(out.end(), gate->begin() + e * part, gate->begin() + (e + 1) * part);
            out.insert(out.end(), up->begin() + e * part, up->begin() + (e + 1) * part);
        }
        return sized(std::move(out), dest_bytes);
    }

    Result<std::vector<uint8_t>> permute(uint64_t dest_bytes) const {
        if (!need_sources(1) || m_op.params.empty() || m_op.params[0] <= 0) return fail("needs a source and n_head > 0");
        const TensorInfo& t = m_model.tensors[m_op.sources[0]];
        if (t.type.id != kF16 || t.ne.size() < 2) return fail("source must be a 2-D F16 tensor");
        auto src = stored(m_op.sources[0]);
        if (!src) return src.error();
        const uint64_t rows = t.ne[1], n_head = static_cast<uint64_t>(m_op.params[0]);
        if (rows % n_head != 0 || src->size() % rows != 0) return fail("rows do not split into heads");
        const uint64_t head_dim = rows / n_head, half = head_dim / 2, row_bytes = src->size() / rows;
        std::vector<uint8_t> out(src->size());
        for (uint64_t oa = 0; oa < rows; ++oa) {
            const uint64_t h = oa / head_dim, d = (oa % head_dim) / 2, p = oa % 2;
            const uint64_t ob = h * head_dim + p * half + d;
            std::memcpy(out.data() + oa * row_bytes, src->data() + ob * row_bytes, row_bytes);
        }
        return sized(std::move(out), dest_bytes);
    }

    Result<std::vector<uint8_t>> patch_split(uint64_t dest_bytes) const {
        if (!need_sources(1) || m_op.params.size() < 3) return fail("needs a source and {slice, T, C_in}");
        const TensorInfo& t = m_model.tensors[m_op.sources[0]];
        if (t.type.id != kF16 || t.ne.size() < 2) return fail("source must be F16 [W,H,T,C_out*C_in]");
        const int64_t slice = m_op.params[0], frames = m_op.params[1], c_in = m_op.params[2];
        auto src = decoded(m_op.sources[0]);
        if (!src) return src.error();
        const uint64_t hw = t.ne[0] * t.ne[1];
        if (c_in <= 0 || frames <= 0 || slice < 0 || slice >= frames || src->size() % (hw * frames * c_in) != 0)
            return fail("source shape does not match {slice, T, C_in}");
        const uint64_t c_out = src->size() / (hw * frames * c_in);
        std::vector<float> out(hw * c_in * c_out);
        for (uint64_t co = 0; co < c_out; ++co)
            for (uint64_t ci = 0; ci < static_cast<uint64_t>(c_in); ++ci) {
                const float* in = src->data() + hw * (slice + frames * (co * c_in + ci));
                std::memcpy(out.data() + hw * (ci + c_in * co), in, hw * sizeof(float));
            }
        return sized(as_bytes(out), dest_bytes);
    }

    Result<std::vector<uint8_t>> resample(uint64_t dest_bytes) const {
        if (!need_sources(1) || m_op.params.size() < 4) return fail("needs a source and {E, P, T, layout}");
        const auto e_n = static_cast<uint64_t>(m_op.params[0]), p_n = static_cast<uint64_t>(m_op.params[1]);
        const auto t_n = static_cast<uint64_t>(m_op.params[2]);
        const int64_t layout = m_op.params[3];
        auto side = static_cast<uint64_t>(std::llround(std::sqrt(static_cast<double>(p_n))));
        if (side * side != p_n || side == 0 || e_n == 0 || t_n == 0) return fail("P is not a square or E/T is 0");
        auto src = decoded(m_op.sources[0]);
        if (!src) return src.error();
        if (src->size() != e_n * p_n) return fail("source holds " + std::to_string(src->size()) + " values, not E*P");
        auto at = [&](uint64_t pos, uint64_t e) -> float {
            switch (layout) {
                case kPosLayoutEmbdFastest:
                    return (*src)[e + e_n * pos];
                case kPosLayoutPosFastest:
                    return (*src)[pos + p_n * e];
                case kPosLayout3dNe0One:
                    return (*src)[pos * e_n + e];
                default:
                    return (*src)[e * p_n + pos];
            }
        };
        auto coord = [&](uint64_t t) {
            return t_n <= 1 ? 0.0 : static_cast<double>(t) * static_cast<double>(side - 1) / static_cast<double>(t_n - 1);
        };
        std::vector<float> out(e_n * t_n * t_n);
        for (uint64_t y = 0; y < t_n; ++y) {
            const double sy = coord(y);
            const auto y0 = static_cast<uint64_t>(std::floor(sy));
            const uint64_t y1 = std::min(y0 + 1, side - 1);
            const auto wy = static_cast<float>(sy - static_cast<double>(y0));
            for (uint64_t x = 0; x < t_n; ++x) {
                const double sx = coord(x);
                const auto x0 = static_cast<uint64_t>(std::floor(sx));
                const uint64_t x1 = std::min(x0 + 1, side - 1);
                const auto wx = static_cast<float>(sx - static_cast<double>(x0));
                for (uint64_t e = 0; e < e_n; ++e) {
                    const float top = at(y0 * side + x0, e) * (1.0f - wx) + at(y0 * side + x1, e) * wx;
                    const float bottom = at(y1 * side + x0, e) * (1.0f - wx) + at(y1 * side + x1, e) * wx;
                    out[e + e_n * (y * t_n + x)] = top * (1.0f - wy) + bottom * wy;
                }
            }
        }
        return sized(as_bytes(out), dest_bytes);
    }

    const Model& m_model;
    const DataOp& m_op;
};

}  // namespace

std::optional<uint64_t> planned_bytes(uint32_t type, const std::vector<uint64_t>& ne) {
    StorageType t = describe_ggml_type(type);
    if (!t.known || ne.empty()) return std::nullopt;
    uint64_t n = 1;
    for (uint64_t d : ne) {
        if (d != 0 && n > UINT64_MAX / d) return std::nullopt;
        n *= d;
    }
    return ggml_tensor_bytes(t, ne[0], n);
}

Result<std::vector<uint8_t>> run_data_op(const Model& model, const DataOp& op) {
    OpRunner runner(model, op);
    if (op.dest >= model.tensors.size()) return runner.fail("destination slot out of range");
    for (size_t s : op.sources)
        if (s >= model.tensors.size()) return runner.fail("source slot out of range");
    auto bytes = planned_bytes(op.dest_type, op.dest_ne);
    if (!bytes) return runner.fail("destination type or shape has no byte size");
    return runner.run(*bytes);
}

}  // namespace mlens::compat
