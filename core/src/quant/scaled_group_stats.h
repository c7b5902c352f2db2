// The statistics' pass over a source with scaled groups (float_source.h): each value is binned
// from its code and its group's step, never decoded into a buffer. Internal to core/quant;
// stats.h states the figures' contract.
//
// Contract: summarize_scaled_groups adds the first pass's figures (value_summary.h) of every
// value to `all` and its count in `binning`'s slots to `total` (binning.slots() entries). Each
// value is step * code, exact in float, so bins, counts, zeros and extremes are those of the
// decoded values (each binned with BinSlots's float operations); sums and moments are power sums
// in double about the middle of `binning`'s range (centred_sums.h), equal to the decoded values'
// up to rounding. For a source whose quick range is finite (a step that is NaN or infinite has
// none). Runs with AVX-512 where the CPU has it and the group length is a multiple of 16, else
// in compiler-vectorized loops; in chunks on `threads` threads, honouring the job's cancel and
// reporting progress over [progress_from, progress_to].
#pragma once

#include <cstdint>
#include <vector>

#include "binning.h"
#include "mlens/job.h"
#include "mlens/quant/float_source.h"
#include "value_summary.h"

namespace mlens {

Status summarize_scaled_groups(const FloatSource& src, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                               double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total);

}  // namespace mlens
