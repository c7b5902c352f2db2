#include "binning.h"

#include <algorithm>

namespace mlens {

Binning Binning::over(double lo, double hi, uint32_t bins) {
    Binning b;
    b.lo = lo;
    b.hi = hi;
    b.bins = bins;
    b.scale = static_cast<float>(bins / (hi - lo));
    const double width = (hi - lo) / bins;
    auto edges = std::make_shared<std::vector<float>>(static_cast<size_t>(bins) + 1);
    (*edges)[0] = -INFINITY;
    for (uint32_t j = 1; j < bins; ++j) {
        // numpy.linspace's arithmetic, two roundings (this file is compiled without contraction).
        const double along = static_cast<double>(j) * width;
        (*edges)[j] = float_at_least(along + lo);
    }
    (*edges)[bins] = INFINITY;
    b.edges = std::move(edges);
    // The candidate's error in bins: three float roundings of a t of at most `bins`, float(lo)'s
    // distance from lo, and the edges' own roundings; twice that, so a whole number within the
    // error of the exact t is always in doubt.
    const double scale = b.scale;
    const double error = bins * 3.0 * 0x1p-24 + std::fabs(static_cast<float>(lo) - lo) * scale + (std::fabs(lo) + std::fabs(hi)) * scale * 0x1p-50;
    b.doubt = static_cast<float>(2 * error + 0x1p-20);
    b.settles_in_one = std::isfinite(scale) && scale > 0 && std::isfinite(error) && b.doubt < 0.25f;
    return b;
}

uint32_t Binning::searched_bin(float x) const {
    const float* e = edges->data();
    return static_cast<uint32_t>(std::upper_bound(e + 1, e + bins, x) - (e + 1));
}

}  // namespace mlens
