#include "weighted_values.h"

#include <algorithm>
#include <cmath>

#include "util/vector_loop.h"

namespace mlens {

MLENS_VECTOR_LOOP void tally_weighted_values(const float* value, const uint64_t* count, uint32_t n, double centre, CentredSums& sums) {
    double total = 0, zeros = 0, a = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
#pragma omp simd reduction(+ : total, zeros, a, s1, s2, s3, s4)
    for (uint32_t c = 0; c < n; ++c) {
        const double k = static_cast<double>(count[c]), x = value[c], d = x - centre, kd = k * d, kd2 = kd * d;
        total += k;
        zeros += x == 0.0 ? k : 0.0;
        a += k * std::fabs(x);
        s1 += kd;
        s2 += kd2;
        s3 += kd2 * d;
        s4 += kd2 * d * d;
    }
    CentredSums row{total, zeros, a, s1, s2, s3, s4, INFINITY, -INFINITY};
    for (uint32_t c = 0; c < n; ++c)
        if (count[c] != 0) {
            row.lo = std::min(row.lo, value[c]);
            row.hi = std::max(row.hi, value[c]);
        }
    sums.add(row);
}

}  // namespace mlens
