// FloatSource: a sequence of float values decoded on demand, in chunks. Statistics, histograms
// and comparisons all read through it, so they work the same for a tensor, one expert of a
// stacked tensor, or the element-wise difference of two tensors.
//
// Contract: read(first, count, out) writes exactly `count` floats; `first` must be a multiple of
// granularity() and `count` a multiple of it unless the range reaches size(). Thread-safe: reads
// of different ranges may run concurrently.
//
// Stored codes: a source whose every value is decoded from one stored code of 8 or 16 bits (F16,
// BF16, 8- and 16-bit integers and minifloats) gives code_values(), the value each code decodes
// to (256 or 65536 entries, indexed by code; empty for every other source), and read_codes(),
// the codes of a range (any range; E_UNSUPPORTED_TYPE for a source without codes). Statistics
// count codes and decode each distinct one once, so their figures are those of read().
//
// Quick range: a source that can find the least and greatest value of a range from its stored
// codes and scales, without decoding every value (block-quantized tensors), gives them from
// quick_range() (same alignment as read()); nullopt when it cannot, or when a value there may be
// NaN or infinite. Statistics then bin values in the same pass that sums them.
//
// Code groups: a source whose values come, group after group of `length` values, from a code
// below `codes` and the group's scales (block-quantized types of 4- and 5-bit codes) gives
// code_groups() ({0, 0} for every other source; codes <= length <= 255, length a divisor of
// granularity()) and read_code_groups(): for the whole groups of a range (read()'s alignment),
// each group's `length` codes (in any order within the group) and its `codes` values, value c
// being what read() gives for code c in that group, bit for bit (a NaN may differ in its payload), and
// monotone in c. Statistics
// count each group's codes and take each distinct value once, weighted by its count.
//
// Scaled groups: a source whose values are, group after group of `length` values, a signed
// integer code times the group's step, the product exact in float (ggml's Q8_0 and Q6_K), gives
// scaled_groups() (0 for every other source; a divisor of granularity()) and
// read_scaled_groups(): for the whole groups of a range (read()'s alignment), each group's
// `length` codes (in any order within the group) and its step, step * code computed in float
// being what read() gives for that value, bit for bit (a NaN may differ in its payload).
// Statistics compute each value from its code and bin and sum it in the same pass, decoding
// nothing into memory.
//
// Offset groups: a source whose values are, group after group of `length` values, an unsigned
// code below `codes` times the group's step plus the group's offset (ggml's Q5_K, whose offset
// is -dmin * m; MLX affine int8, whose offset is the bias) gives offset_groups() ({0, 0}
// for every other source; codes <= 256, length a divisor of granularity()) and
// read_offset_groups(): for the whole groups of a range (read()'s alignment), each group's
// `length` codes (in any order within the group), its step and its offset, step * code rounded
// to float, then that plus offset rounded to float, being what read() gives for that value, bit
// for bit (a NaN may differ in its payload). Statistics take them as they take scaled groups.
//
// Routes (stats.h), decided per type by decode_bench: Q8_0 and Q6_K are scaled groups (Q8_0's
// half-float steps, which repeat, counted in tables of step and code); Q5_K and
// MLX affine int8 offset groups (each value binned from its code, one pass); Q4_0, Q4_1, Q5_0,
// Q5_1, IQ4_NL, Q4_K, IQ4_XS and MLX affine int4 code groups (each group's codes counted, then
// each distinct code tallied once: 16 entries for 32 values for the 4-bit types). A source that
// offers offset groups may offer code groups too (Q5_K): statistics take the offset groups.
//
// Wide values: a source whose values float cannot hold exactly (32- and 64-bit integers, F64)
// says so in wide_kind() and gives them from read_wide() (same alignment as read()) as long
// double, whose 64-bit significand holds every 64-bit integer and every double exactly (x86-64;
// a quad-precision long double holds them too). read() still gives them rounded to float.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens {

struct ValueBounds {
    float min = 0, max = 0;
};

struct CodeGroups {
    uint32_t codes = 0, length = 0;
};

struct OffsetGroups {
    uint32_t length = 0, codes = 0;
};

enum class WideKind { none, integer, float64 };

class FloatSource {
public:
    virtual ~FloatSource() = default;
    virtual uint64_t size() const = 0;
    virtual uint64_t granularity() const = 0;
    virtual Status read(uint64_t first, uint64_t count, float* out) const = 0;

    virtual std::vector<float> code_values() const { return {}; }
    virtual Status read_codes(uint64_t first, uint64_t count, uint16_t* out) const;

    virtual Result<std::optional<ValueBounds>> quick_range(uint64_t first, uint64_t count) const;

    virtual CodeGroups code_groups() const { return {}; }
    virtual Status read_code_groups(uint64_t first, uint64_t count, uint8_t* codes, float* values) const;

    virtual uint32_t scaled_groups() const { return 0; }
    virtual Status read_scaled_groups(uint64_t first, uint64_t count, int8_t* codes, float* steps) const;

    virtual OffsetGroups offset_groups() const { return {}; }
    virtual Status read_offset_groups(uint64_t first, uint64_t count, uint8_t* codes, float* steps, float* offsets) const;

    virtual WideKind wide_kind() const { return WideKind::none; }
    virtual Status read_wide(uint64_t first, uint64_t count, long double* out) const;

    // A chunk length near `target` elements that is a multiple of granularity().
    uint64_t chunk_length(uint64_t target = 1u << 20) const;
};

// Every value of a source, read in chunks on `threads` threads (0: one per core); E_CANCELLED
// when the job is cancelled, or the first read error.
Result<std::vector<float>> read_all(const FloatSource& source, JobContext* job = nullptr, unsigned threads = 0);

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

// The values of a vector (a block-scale series, captured activations, a tensor read into memory),
// which must outlive it.
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
