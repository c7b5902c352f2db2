// The statistics' pass over a source with scaled or offset groups (float_source.h): each value
// is binned from its code, its group's step (and offset), never decoded into a buffer. Internal
// to core/quant; stats.h states the figures' contract.
//
// Contract: summarize_scaled_groups adds the first pass's figures (value_summary.h) of every
// value to `all` and its count in `binning`'s slots to `total` (binning.slots() entries). Each
// value is computed in float as read() computes it (step * code, rounded, plus offset, rounded;
// this file is compiled without floating-point contraction), so bins, counts, zeros and extremes
// are those of the decoded values (each binned by binning.h's rule); sums and
// moments are power sums in double about the middle of `binning`'s range (centred_sums.h), equal
// to the decoded values' up to rounding. For a source whose quick range is finite (a step that is
// NaN or infinite has none). Runs with AVX-512 where the CPU has it and the group length is a
// multiple of 16 (up to 2048), else (or with `vectors` false, which tests use to compare the two)
// in compiler-vectorized loops; in chunks on `threads` threads, honouring the job's cancel and
// reporting progress over [progress_from, progress_to].
//
// Decision (decode_bench, perf): power sums are taken value by value in double. Integer power
// sums of each group's codes, expanded once a group, were measured slower here: their per-group
// reduction cost more vector work than the per-value sums, which run beside the bound of the
// pass, the two memory operations of each value's counter increment.
#pragma once

#include <cstdint>
#include <vector>

#include "binning.h"
#include "mlens/job.h"
#include "mlens/quant/float_source.h"
#include "value_summary.h"

namespace mlens {

Status summarize_scaled_groups(const FloatSource& src, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                               double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total, bool vectors = true);

}  // namespace mlens
