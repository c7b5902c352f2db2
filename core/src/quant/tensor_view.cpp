#include "mlens/quant/tensor_view.h"

#include <ggml.h>

#include "mlens/formats/gguf_byte_order.h"
#include "mlens/text/nearest_name.h"
#include "tensor_view_kinds.h"

namespace mlens {

namespace {

Error unsupported(const TensorInfo& t, const std::string& why) { return Error{ErrorCode::E_UNSUPPORTED_TYPE, t.name, std::nullopt, why}; }

}  // namespace

TensorViewKind::TensorViewKind(const Model& model, size_t index, std::vector<uint64_t> ne, uint64_t elements, uint64_t block,
                               uint64_t block_bytes)
    : m_model(&model), m_index(index), m_ne(std::move(ne)), m_elements(elements), m_block(block), m_block_bytes(block_bytes) {}

Error TensorViewKind::range_error(const std::string& why) const { return Error{ErrorCode::E_RANGE, info().name, std::nullopt, why}; }

Status TensorViewKind::read_blocks(uint64_t, uint64_t, uint8_t*) const { return range_error("blocks out of range"); }

Status TensorViewKind::read_group_params(uint64_t, uint64_t, float*, float*) const { return range_error("groups out of range"); }

void TensorViewKind::narrow(uint64_t index) {
    const uint64_t outer = m_ne.empty() ? 1 : m_ne.back();
    m_elements /= outer;
    if (m_ne.size() > 1) m_ne.pop_back();
    m_first_byte += index * (m_elements / m_block) * m_block_bytes;
}

Status TensorViewKind::check_read_range(uint64_t first, uint64_t count) const {
    if (first % m_block != 0 || first > m_elements || count > m_elements - first || (count % m_block != 0 && first + count != m_elements))
        return range_error("read not aligned to the type's blocks");
    return ok_status();
}

Result<std::optional<ValueBounds>> TensorViewKind::quick_range(uint64_t first, uint64_t count) const {
    if (Status s = check_read_range(first, count); !s) return s.error();
    return std::optional<ValueBounds>{};
}

Result<TensorView> TensorView::open(const Model& model, const std::string& name) {
    for (size_t i = 0; i < model.tensors.size(); ++i)
        if (model.tensors[i].name == name) return open(model, i);
    // A model read only in part (a shard or blob missing) may have the tensor in what was not read.
    return Error{ErrorCode::E_NOT_FOUND, "tensor", std::nullopt,
                 "no tensor named " + name + did_you_mean(name, model.tensor_names()) +
                     (model.partial ? " (the model was read only in part: its errors say what is missing)" : "")};
}

Result<TensorView> TensorView::open(const Model& model, size_t index) {
    if (index >= model.tensors.size()) return Error{ErrorCode::E_NOT_FOUND, "tensor", std::nullopt, "no such tensor"};
    const TensorInfo& t = model.tensors[index];
    if (t.presence == DataPresence::unknown) return unlocated_data_error(t);
    if (t.quant) {
        auto kind = MlxGroupsKind::open(model, index);
        if (!kind) return kind.error();
        return TensorView(std::move(*kind));
    }
    if (!t.type.known || !t.n_bytes) return unsupported(t, "cannot decode type " + t.type.name);
    if (model.format == Format::gguf && t.file < model.files.size() && model.files[t.file].big_endian && !has_big_endian_layout(t.type.id))
        return Error{ErrorCode::E_BIG_ENDIAN_TYPE, t.name, std::nullopt, big_endian_refusal(t.type.name)};
    if (model.format == Format::gguf && ggml_get_type_traits(static_cast<ggml_type>(t.type.id))->to_float)
        return TensorView(std::make_shared<GgmlBlocksKind>(model, index));
    auto element = element_type_of(model.format, t.type);
    if (!element) return unsupported(t, "cannot decode " + std::string(format_name(model.format)) + " type " + t.type.name);
    if (*t.n_bytes != t.n_elements * element_bytes(*element))
        return Error{ErrorCode::E_SHAPE, t.name, std::nullopt, "byte size does not match the shape"};
    return TensorView(std::make_shared<ElementKind>(model, index, *element));
}

Result<TensorView> TensorView::slice(uint64_t index) const {
    const std::vector<uint64_t>& ne = shape();
    const uint64_t outer = ne.empty() ? 1 : ne.back();
    if (index >= outer || outer == 0)
        return Error{ErrorCode::E_RANGE, info().name, std::nullopt, "slice " + std::to_string(index) + " of " + std::to_string(outer)};
    if ((size() / outer) % granularity() != 0) return Error{ErrorCode::E_RANGE, info().name, std::nullopt, "a slice would split a block"};
    return TensorView(m_kind->slice(index));
}

uint64_t TensorView::size() const { return m_kind->size(); }
uint64_t TensorView::granularity() const { return m_kind->granularity(); }
Status TensorView::read(uint64_t first, uint64_t count, float* out) const { return m_kind->read(first, count, out); }
std::vector<float> TensorView::code_values() const { return m_kind->code_values(); }
Status TensorView::read_codes(uint64_t first, uint64_t count, uint16_t* out) const { return m_kind->read_codes(first, count, out); }
Result<std::optional<ValueBounds>> TensorView::quick_range(uint64_t first, uint64_t count) const {
    return m_kind->quick_range(first, count);
}
CodeGroups TensorView::code_groups() const { return m_kind->code_groups(); }
Status TensorView::read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const {
    return m_kind->read_code_groups(first, count, codes, values);
}
uint32_t TensorView::scaled_groups() const { return m_kind->scaled_groups(); }
Status TensorView::read_scaled_groups(uint64_t first, uint64_t count, int8_t* codes, float* steps) const {
    return m_kind->read_scaled_groups(first, count, codes, steps);
}
OffsetGroups TensorView::offset_groups() const { return m_kind->offset_groups(); }
Status TensorView::read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const {
    return m_kind->read_offset_groups(first, count, codes, steps, offsets);
}
WideKind TensorView::wide_kind() const { return m_kind->wide_kind(); }
Status TensorView::read_wide(uint64_t first, uint64_t count, long double* out) const { return m_kind->read_wide(first, count, out); }
TensorView::Kind TensorView::kind() const { return m_kind->kind(); }
const TensorInfo& TensorView::info() const { return m_kind->info(); }
const Model& TensorView::model() const { return m_kind->model(); }
const std::vector<uint64_t>& TensorView::shape() const { return m_kind->shape(); }
std::string TensorView::type_name() const { return m_kind->type_name(); }
uint64_t TensorView::block_bytes() const { return m_kind->block_bytes(); }
Status TensorView::read_blocks(uint64_t first, uint64_t count, uint8_t* out) const { return m_kind->read_blocks(first, count, out); }
Status TensorView::read_group_params(uint64_t first, uint64_t count, float* scales, float* biases) const {
    return m_kind->read_group_params(first, count, scales, biases);
}

}  // namespace mlens
