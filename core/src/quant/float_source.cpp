#include "mlens/quant/float_source.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <numeric>
#include <vector>

#include "mlens/util/parallel.h"

namespace mlens {

uint64_t FloatSource::chunk_length(uint64_t target) const {
    uint64_t g = std::max<uint64_t>(granularity(), 1);
    return std::max<uint64_t>(g, target / g * g);
}

Status FloatSource::read_codes(uint64_t, uint64_t, uint16_t*) const {
    return Error{"E_UNSUPPORTED_TYPE", "", std::nullopt, "values are not stored as 8- or 16-bit codes"};
}

Result<std::vector<float>> read_all(const FloatSource& source, JobContext* job, unsigned threads) {
    std::vector<float> values(source.size());
    const uint64_t chunk = source.chunk_length();
    const uint64_t chunks = (values.size() + chunk - 1) / chunk;
    std::atomic<uint64_t> done{0};
    std::mutex error_mutex;
    std::optional<Error> error;
    parallel_for(chunks, threads, [&](uint64_t c) {
        if (job_cancelled(job)) return false;
        const uint64_t first = c * chunk, count = std::min<uint64_t>(chunk, values.size() - first);
        if (Status s = source.read(first, count, values.data() + first); !s) {
            std::lock_guard lock(error_mutex);
            error = s.error();
            return false;
        }
        job_report(job, static_cast<double>(++done) / static_cast<double>(chunks));
        return true;
    });
    if (error) return *error;
    if (job_cancelled(job)) return Error{"E_CANCELLED", "", std::nullopt, "cancelled"};
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
    if (first > m_values.size() || count > m_values.size() - first) return Error{"E_RANGE", "", std::nullopt, "read out of range"};
    std::copy_n(m_values.begin() + static_cast<std::ptrdiff_t>(first), count, out);
    return ok_status();
}

}  // namespace mlens
