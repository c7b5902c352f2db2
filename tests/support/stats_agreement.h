// The statistics of a source that takes a shortcut (stored codes, code, scaled or offset groups,
// step tables) against those of its decoded values taken the plain way, for the tests of every
// statistics route.
#pragma once

#include <cstdint>
#include <vector>

#include "mlens/quant/float_source.h"

namespace mlens::test {

// compute_stats_and_histogram and compute_histogram (over [-0.25, 0.5]) of `source` equal those of
// `values`, its decoded values, in a VectorSource, on `threads` threads with `bins` bins: counts,
// extremes and histograms exactly (and numpy's bins), moments within rounding.
void require_same_figures(const FloatSource& source, const std::vector<float>& values, uint32_t bins, unsigned threads);

}  // namespace mlens::test
