// The statistics' passes over a source with code groups (float_source.h): each group's codes
// are counted, never decoded. Internal to core/quant; stats.h states the figures' contract.
//
// Contract:
//  - code_group_range is the least and greatest value of the source: the values of each group's
//    least and greatest code (values are monotone in the code); nullopt when one of them is NaN
//    or infinite (statistics then decode values instead).
//  - summarize_code_groups adds the first pass's figures (value_summary.h) of every value to
//    `all` and its count in `binning`'s slots to `total` (binning.slots() entries), from how often
//    each code occurs in each group: each distinct value of a group is binned and summed once,
//    weighted by its count, so bins, counts, zeros and extremes are those of the decoded values
//    (each value binned by binning.h's rule) and the sums and moments equal theirs
//    up to rounding: power sums in double about the middle of `binning`'s range, added in another
//    order. For a source whose code_group_range is finite. Codes are counted with GFNI and
//    AVX-512 BITALG where the CPU has them, else with AVX2 compares, else one at a time; entries
//    are tallied with AVX-512 where the CPU has it, else in compiler-vectorized loops.
//  - Both run in chunks on `threads` threads, honour the job's cancel and report progress over
//    [progress_from, progress_to].
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "binning.h"
#include "mlens/job.h"
#include "mlens/quant/float_source.h"
#include "value_summary.h"

namespace mlens {

Result<std::optional<ValueBounds>> code_group_range(const FloatSource& src, JobContext* job, unsigned threads, double progress_from,
                                                    double progress_to);

Status summarize_code_groups(const FloatSource& src, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                             double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total);

}  // namespace mlens
