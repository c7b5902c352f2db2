// FloatSource: a sequence of float values decoded on demand, in chunks. Statistics, histograms
// and comparisons all read through it, so they work the same for a tensor, one expert of a
// stacked tensor, or the element-wise difference of two tensors.
//
// Contract: read(first, count, out) writes exactly `count` floats; `first` must be a multiple of
// granularity() and `count` a multiple of it unless the range reaches size(). Thread-safe: reads
// of different ranges may run concurrently.
#pragma once

#include <cstdint>
#include <vector>

#include "mlens/result.h"

namespace mlens {

class FloatSource {
public:
    virtual ~FloatSource() = default;
    virtual uint64_t size() const = 0;
    virtual uint64_t granularity() const = 0;
    virtual Status read(uint64_t first, uint64_t count, float* out) const = 0;

    // A chunk length near `target` elements that is a multiple of granularity().
    uint64_t chunk_length(uint64_t target = 1u << 20) const;
};

// Element-wise a - b of two sources of equal size.
class DifferenceSource final : public FloatSource {
public:
    DifferenceSource(const FloatSource& a, const FloatSource& b) : m_a(a), m_b(b) {}
    uint64_t size() const override { return m_a.size(); }
    uint64_t granularity() const override;
    Status read(uint64_t first, uint64_t count, float* out) const override;

private:
    const FloatSource& m_a;
    const FloatSource& m_b;
};

// The values of a vector (a block-scale series, captured activations), which must outlive it.
class VectorSource final : public FloatSource {
public:
    explicit VectorSource(const std::vector<float>& values) : m_values(values) {}
    uint64_t size() const override { return m_values.size(); }
    uint64_t granularity() const override { return 1; }
    Status read(uint64_t first, uint64_t count, float* out) const override;

private:
    const std::vector<float>& m_values;
};

}  // namespace mlens
