// Statistics of a source with wide values (float_source.h: 32- and 64-bit integers, F64), from
// the values themselves rather than their float roundings. Internal to core/quant.
#pragma once

#include "mlens/job.h"
#include "mlens/quant/stats.h"

namespace mlens {

// Replaces the counts, extremes, mean, std, mean |x| and kurtosis of `stats` (computed from the
// float values) with those of the wide values, in one more pass: integer extremes exact
// (stats.integer_extremes), integer sums in 128 bits, F64 sums and every moment in long double.
// Percentiles stay those of the float values, kept inside the exact [min, max].
Status apply_wide_figures(const FloatSource& source, TensorStats& stats, JobContext* job, unsigned threads);

}  // namespace mlens
