#include "numpy_histogram.h"

#include <algorithm>
#include <cmath>

namespace mlens::test {

NumpyHistogram numpy_histogram(const std::vector<float>& values, double lo, double hi, uint32_t bins) {
    std::vector<double> edge(bins + 1);
    const double step = (hi - lo) / bins;
    for (uint32_t j = 0; j < bins; ++j) {
        volatile double along = static_cast<double>(j) * step;  // two roundings, as numpy
        edge[j] = along + lo;
    }
    edge[bins] = hi;
    NumpyHistogram h;
    h.counts.assign(bins, 0);
    for (float f : values) {
        const double x = f;
        if (!std::isfinite(x)) continue;
        if (x < lo) {
            ++h.below;
        } else if (x > hi) {
            ++h.above;
        } else {
            const auto j = static_cast<uint32_t>(std::upper_bound(edge.begin(), edge.end(), x) - edge.begin()) - 1;
            ++h.counts[std::min(j, bins - 1)];
        }
    }
    return h;
}

}  // namespace mlens::test
