#include "mlens/quant/float_source.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "mlens/util/parallel_job.h"

namespace mlens {

uint64_t FloatSource::chunk_length(uint64_t target) const {
    uint64_t g = std::max<uint64_t>(granularity(), 1);
    return std::max<uint64_t>(g, target / g * g);
}

Status FloatSource::read_codes(uint64_t, uint64_t, uint16_t*) const {
    return Error{ErrorCode::E_UNSUPPORTED_TYPE, "", std::nullopt, "values are not stored as 8- or 16-bit codes"};
}

Status FloatSource::read_code_groups(uint64_t, uint64_t, uint8_t*, float*) const {
    return Error{ErrorCode::E_UNSUPPORTED_TYPE, "", std::nullopt, "values are not stored as groups of codes"};
}

Status FloatSource::read_scaled_groups(uint64_t, uint64_t, int8_t*, float*) const {
    return Error{ErrorCode::E_UNSUPPORTED_TYPE, "", std::nullopt, "values are not stored as scaled integer groups"};
}

Status FloatSource::read_offset_groups(uint64_t, uint64_t, uint8_t*, float*, float*) const {
    return Error{ErrorCode::E_UNSUPPORTED_TYPE, "", std::nullopt, "values are not stored as groups of codes with a step and an offset"};
}

Result<std::optional<ValueBounds>> FloatSource::quick_range(uint64_t, uint64_t) const { return std::optional<ValueBounds>{}; }

Status FloatSource::read_wide(uint64_t, uint64_t, long double*) const {
    return Error{ErrorCode::E_UNSUPPORTED_TYPE, "", std::nullopt, "values are not wider than float"};
}

Result<std::vector<float>> read_all(const FloatSource& source, JobContext* job, unsigned threads) {
    std::vector<float> values(source.size());
    const uint64_t chunk = source.chunk_length();
    Status run = parallel_job((values.size() + chunk - 1) / chunk, threads, job, [&](uint64_t c) {
        const uint64_t first = c * chunk;
        return source.read(first, std::min<uint64_t>(chunk, values.size() - first), values.data() + first);
    });
    if (!run) return run.error();
    return values;
}

uint64_t DifferenceSource::granularity() const { return std::lcm(m_a.granularity(), m_b.granularity()); }

Status DifferenceSource::read(uint64_t first, uint64_t count, float* out) const {
    std::vector<float> other(count);
    if (Status s = m_a.read(first, count, out); !s) return s;
    if (Status s = m_b.read(first, count, other.data()); !s) return s;
    for (uint64_t i = 0; i < count; ++i) out[i] -= other[i];
    return ok_status();
}

Status VectorSource::read(uint64_t first, uint64_t count, float* out) const {
    if (first > m_values.size() || count > m_values.size() - first) return Error{ErrorCode::E_RANGE, "", std::nullopt, "read out of range"};
    std::copy_n(m_values.begin() + static_cast<std::ptrdiff_t>(first), count, out);
    return ok_status();
}

}  // namespace mlens
