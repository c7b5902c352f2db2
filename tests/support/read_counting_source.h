// A FloatSource over a tensor view that passes every read through and counts its decoded reads
// (read()), so that a test can see that statistics reached the values through codes, groups or
// steps and decoded none.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "mlens/quant/float_source.h"
#include "mlens/quant/tensor_view.h"

namespace mlens::test {

class ReadCountingSource final : public FloatSource {
public:
    explicit ReadCountingSource(const TensorView& view) : m_view(view) {}
    uint64_t size() const override { return m_view.size(); }
    uint64_t granularity() const override { return m_view.granularity(); }
    Status read(uint64_t first, uint64_t count, float* out) const override {
        m_reads += 1;
        return m_view.read(first, count, out);
    }
    std::vector<float> code_values() const override { return m_view.code_values(); }
    Status read_codes(uint64_t first, uint64_t count, uint16_t* out) const override { return m_view.read_codes(first, count, out); }
    Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const override {
        return m_view.quick_range(first, count);
    }
    CodeGroups code_groups() const override { return m_view.code_groups(); }
    Status read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const override {
        return m_view.read_code_groups(first, count, codes, values);
    }
    uint32_t scaled_groups() const override { return m_view.scaled_groups(); }
    Status read_scaled_groups(uint64_t first, uint64_t count, int8_t* codes, float* steps) const override {
        return m_view.read_scaled_groups(first, count, codes, steps);
    }
    OffsetGroups offset_groups() const override { return m_view.offset_groups(); }
    Status read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const override {
        return m_view.read_offset_groups(first, count, codes, steps, offsets);
    }
    // Decoded reads so far.
    uint64_t reads() const { return m_reads; }

private:
    const TensorView& m_view;
    mutable std::atomic<uint64_t> m_reads{0};
};

}  // namespace mlens::test
