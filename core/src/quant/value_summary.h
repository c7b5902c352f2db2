// What one pass over a run of values learns, in double (float sources) or long double (wide
// ones): NaN and infinity counts, zeros, extremes and |x| sum of the finite values, and their
// central moments. Internal to core/quant; chunks merge exactly in any order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "central_moments.h"

namespace mlens {

// `inf` counts both infinities; `neg_inf` the negative ones among them.
template <typename Real>
struct ValueSummary {
    uint64_t nan = 0, inf = 0, neg_inf = 0, zeros = 0;
    Real min = INFINITY, max = -INFINITY, sum_abs = 0;
    CentralMoments<Real> moments;

    void merge(const ValueSummary& o) {
        nan += o.nan;
        inf += o.inf;
        neg_inf += o.neg_inf;
        zeros += o.zeros;
        min = std::min(min, o.min);
        max = std::max(max, o.max);
        sum_abs += o.sum_abs;
        moments.merge(o.moments);
    }
};

}  // namespace mlens
