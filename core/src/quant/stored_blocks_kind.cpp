// TensorView kinds whose stored blocks decode on their own: ggml blocks and element types.
#include <ggml.h>

#include <bit>

#include "block_codes.h"
#include "block_range.h"
#include "block_steps.h"
#include "tensor_view_kinds.h"
#include "util/thread_scratch.h"

namespace mlens {

namespace {

// Largest read whose byte buffer a thread keeps for its next read.
constexpr uint64_t kKeptReadBytes = 16u << 20;

// The blocks that hold values [first, first + count) of a kind (a range read() accepts), in a
// per-thread buffer that the next call overwrites.
Result<const uint8_t*> blocks_of(const StoredBlocksKind& kind, uint64_t first, uint64_t count) {
    const uint64_t block = kind.granularity(), blocks = (count + block - 1) / block;
    std::vector<uint8_t>& bytes = thread_scratch<std::vector<uint8_t>>([] {});
    bytes.resize(blocks * kind.block_bytes());
    if (Status s = kind.read_blocks(first / block, blocks, bytes.data()); !s) return s.error();
    return static_cast<const uint8_t*>(bytes.data());
}

}  // namespace

Status StoredBlocksKind::read_blocks(uint64_t first, uint64_t count, uint8_t* out) const {
    const uint64_t n_blocks = (m_elements + m_block - 1) / m_block;
    if (first > n_blocks || count > n_blocks - first) return range_error("blocks out of range");
    return m_model->read_tensor_bytes(m_index, m_first_byte + first * m_block_bytes, count * m_block_bytes, out);
}

Status StoredBlocksKind::read(uint64_t first, uint64_t count, float* out) const {
    if (Status s = check_read_range(first, count); !s) return s;
    // One read per request (a system call each), into a per-thread buffer that keeps its pages
    // (requests of chunk size; a larger one gets a buffer of its own).
    const uint64_t blocks = (count + m_block - 1) / m_block;
    std::vector<uint8_t>& kept = thread_scratch<std::vector<uint8_t>>([] {});
    std::vector<uint8_t> own;
    std::vector<uint8_t>& bytes = blocks * m_block_bytes <= kKeptReadBytes ? kept : own;
    bytes.resize(blocks * m_block_bytes);
    if (Status s = read_blocks(first / m_block, blocks, bytes.data()); !s) return s;
    decode(bytes.data(), count, out);
    return ok_status();
}

std::vector<float> StoredBlocksKind::code_values() const {
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

Status StoredBlocksKind::read_codes(uint64_t first, uint64_t count, uint16_t* out) const {
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

GgmlBlocksKind::GgmlBlocksKind(const Model& model, size_t index)
    : StoredBlocksKind(model, index, model.tensors[index].ne, model.tensors[index].n_elements, model.tensors[index].type.block_size,
                       model.tensors[index].type.block_bytes) {}

Result<std::optional<ValueBounds>> GgmlBlocksKind::quick_range(uint64_t first, uint64_t count) const {
    if (!has_block_value_range(info().type.id)) return TensorViewKind::quick_range(first, count);
    if (Status s = check_read_range(first, count); !s) return s.error();
    const Result<const uint8_t*> bytes = blocks_of(*this, first, count);
    if (!bytes) return bytes.error();
    return block_value_range(info().type.id, *bytes, (count + m_block - 1) / m_block);
}

CodeGroups GgmlBlocksKind::code_groups() const { return block_code_groups(info().type.id); }

Status GgmlBlocksKind::read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const {
    if (code_groups().codes == 0) return TensorViewKind::read_code_groups(first, count, codes, values);
    if (Status s = check_read_range(first, count); !s) return s;
    const Result<const uint8_t*> bytes = blocks_of(*this, first, count);
    if (!bytes) return bytes.error();
    read_block_code_groups(info().type.id, *bytes, (count + m_block - 1) / m_block, codes, values);
    return ok_status();
}

uint32_t GgmlBlocksKind::scaled_groups() const { return block_scaled_groups(info().type.id); }

Status GgmlBlocksKind::read_scaled_groups(uint64_t first, uint64_t count, int8_t* codes, float* steps) const {
    if (scaled_groups() == 0) return TensorViewKind::read_scaled_groups(first, count, codes, steps);
    if (Status s = check_read_range(first, count); !s) return s;
    const Result<const uint8_t*> bytes = blocks_of(*this, first, count);
    if (!bytes) return bytes.error();
    read_block_scaled_groups(info().type.id, *bytes, (count + m_block - 1) / m_block, codes, steps);
    return ok_status();
}

OffsetGroups GgmlBlocksKind::offset_groups() const { return block_offset_groups(info().type.id); }

Status GgmlBlocksKind::read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const {
    if (offset_groups().length == 0) return TensorViewKind::read_offset_groups(first, count, codes, steps, offsets);
    if (Status s = check_read_range(first, count); !s) return s;
    const Result<const uint8_t*> bytes = blocks_of(*this, first, count);
    if (!bytes) return bytes.error();
    read_block_offset_groups(info().type.id, *bytes, (count + m_block - 1) / m_block, codes, steps, offsets);
    return ok_status();
}

void GgmlBlocksKind::decode(const uint8_t* bytes, uint64_t count, float* out) const {
    if (info().type.id == GGML_TYPE_F16)
        decode_elements(ElementType::f16, bytes, count, out);
    else
        ggml_get_type_traits(static_cast<ggml_type>(info().type.id))->to_float(bytes, out, static_cast<int64_t>(count));
}

ElementKind::ElementKind(const Model& model, size_t index, ElementType element)
    : StoredBlocksKind(model, index, model.tensors[index].ne, model.tensors[index].n_elements, 1, element_bytes(element)),
      m_element(element) {}

Status ElementKind::read_wide(uint64_t first, uint64_t count, long double* out) const {
    if (wide_kind() == WideKind::none) return FloatSource::read_wide(first, count, out);
    if (Status s = check_read_range(first, count); !s) return s;
    std::vector<uint8_t>& bytes = thread_scratch<std::vector<uint8_t>>([] {});
    bytes.resize(count * m_block_bytes);
    if (Status s = read_blocks(first, count, bytes.data()); !s) return s;
    decode_wide_elements(m_element, bytes.data(), count, out);
    return ok_status();
}

void ElementKind::decode(const uint8_t* bytes, uint64_t count, float* out) const { decode_elements(m_element, bytes, count, out); }

}  // namespace mlens
