// Running least and greatest value over groups of values decoded as a monotone function of a code:
// each group adds f(least code) and f(greatest code). Internal to core/quant.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>

#include "mlens/quant/float_source.h"

namespace mlens {

struct ValueExtremes {
    float lo = INFINITY, hi = -INFINITY;
    bool finite = true;   // false from the first NaN or infinite extreme on

    // The two ends of one group, in either order (a negative scale reverses them).
    void add(float a, float b) {
        finite = finite && std::isfinite(a) && std::isfinite(b);
        lo = std::min(lo, std::min(a, b));
        hi = std::max(hi, std::max(a, b));
    }
    // nullopt when an end was not finite, or when nothing was added.
    std::optional<ValueBounds> range() const {
        if (!finite || lo > hi) return std::nullopt;
        return ValueBounds{lo, hi};
    }
};

}  // namespace mlens
