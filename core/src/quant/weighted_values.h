// Distinct values taken once each, weighted by how often they occur: the last step of the
// statistics' table routes (step_table_stats.h, group_table_stats.h). Internal to core/quant.
//
// Contract: tally_weighted_values(value, count, n, centre, sums) adds the n finite values, value[i]
// counted count[i] times, to `sums` (centred_sums.h: power sums in double about `centre`); a
// value counted 0 times adds nothing, not even to the extremes. The same input gives the same
// sums on one CPU whatever the threads (vector lanes may differ between CPUs).
#pragma once

#include <cstdint>

#include "centred_sums.h"

namespace mlens {

void tally_weighted_values(const float* value, const uint64_t* count, uint32_t n, double centre, CentredSums& sums);

}  // namespace mlens
