// The counts np.histogram(values as float64, bins, range=(lo, hi)) gives, computed here the way
// numpy defines them and independently of core's binning: edges by numpy.linspace's arithmetic
// in double, each value in the bin of the greatest edge at or below it, the last bin also holding
// hi; values outside [lo, hi] and non-finite ones in below/above/neither.
#pragma once

#include <cstdint>
#include <vector>

namespace mlens::test {

struct NumpyHistogram {
    std::vector<uint64_t> counts;
    uint64_t below = 0, above = 0;
};

NumpyHistogram numpy_histogram(const std::vector<float>& values, double lo, double hi, uint32_t bins);

}  // namespace mlens::test
