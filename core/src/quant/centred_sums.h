// Counts, zeros, extremes and power sums of values about one fixed centre, kept by the passes
// that tally values without decoding them (code_group_stats.cpp, scaled_group_stats.cpp).
// Internal to core/quant.
//
// Contract: total and zeros count values (weighted where a value stands for several), sum_abs is
// the sum of |x|, s1..s4 the sums of (x - centre)^k, lo and hi the least and greatest value
// (±infinity when none). Batches add up field by field (add), without a merge of moments;
// summary(centre) gives the first pass's figures (value_summary.h) of every value summed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "value_summary.h"

namespace mlens {

struct CentredSums {
    double total = 0, zeros = 0, sum_abs = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    float lo = INFINITY, hi = -INFINITY;

    void add(const CentredSums& o) {
        total += o.total;
        zeros += o.zeros;
        sum_abs += o.sum_abs;
        s1 += o.s1;
        s2 += o.s2;
        s3 += o.s3;
        s4 += o.s4;
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
    }

    ValueSummary<double> summary(double centre) const {
        ValueSummary<double> out;
        if (total == 0) return out;
        const double shift = s1 / total, mean = centre + shift;
        const double m2 = s2 - s1 * shift;
        const double m3 = s3 - 3 * shift * s2 + 2 * shift * shift * s1;
        const double m4 = s4 - 4 * shift * s3 + 6 * shift * shift * s2 - 3 * shift * shift * shift * s1;
        out.zeros = static_cast<uint64_t>(zeros);
        out.min = lo;
        out.max = hi;
        out.sum_abs = sum_abs;
        out.moments.merge({static_cast<uint64_t>(total), mean, m2, m3, m4});
        return out;
    }
};

}  // namespace mlens
