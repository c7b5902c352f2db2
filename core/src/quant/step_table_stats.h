// The statistics' pass over a source with scaled groups whose steps repeat (float_source.h):
// ggml's Q8_0, a half-float step per 32 signed 8-bit codes, whose weights take a few thousand
// distinct steps however large the tensor. Internal to core/quant; stats.h states the figures'
// contract.
//
// Contract:
//  - count_step_tables counts, over the whole source, how often each code occurs with each
//    distinct step: one counter increment per value, nothing decoded, binned or summed. Each
//    chunk's groups are visited in the order of their steps, so that the counters of one step
//    stay in L1 while its groups are counted. It gives nullopt, and the caller takes another
//    route, for a source with a step no half float holds
//    (NaN and the infinities among them), with no value, or whose distinct steps (counted over
//    every thread, so that the route does not depend on the threads) times the 256 codes would
//    pass a 32nd of the source's values, at least 2^16 and at most 2^20 (4,096 steps: 8 MiB of
//    counters on each thread and 8 MiB merged), or with a chunk of 2^19 values whose groups are
//    fewer than 8 a distinct step: the tables would then cost more than binning each value. It
//    declines at the chunk whose steps pass that, counting no further; both are properties of the
//    source, not of the threads. Honours the job's cancel and reports progress
//    over [progress_from, progress_to].
//  - From the tables, each distinct value (step * code in float, as read() computes it: the
//    product is exact) is taken once, weighted by its count. step_table_range gives the least and
//    greatest value; summarize_step_tables the first pass's figures (value_summary.h) and the
//    counts in `binning`'s slots (binning.slots() entries), each value binned by binning.h's
//    rule, power sums in double about the middle of `binning`'s range taken step by step in the
//    order of the steps' bits: the figures do not depend on the threads or the chunks. It honours
//    the job's cancel and reports progress over [progress_from, progress_to].
// Decision (decode_bench, perf): tables, not a value-by-value pass, once the steps repeat. The
// value-by-value pass binned and summed every value and read the source twice (its range first);
// the tables need one read, one increment per value, and work per distinct step.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "binning.h"
#include "mlens/job.h"
#include "mlens/quant/float_source.h"
#include "value_summary.h"

namespace mlens {

struct StepTables {
    static constexpr uint32_t kCodes = 256;
    std::vector<float> steps;  // distinct steps, ascending by their half-float bits
    std::vector<uint64_t> counts;  // kCodes per step: counts[s * kCodes + uint8_t(code)]
};

Result<std::optional<StepTables>> count_step_tables(const FloatSource& src, JobContext* job, unsigned threads, double progress_from,
                                                    double progress_to);

ValueBounds step_table_range(const StepTables& tables);

Status summarize_step_tables(const StepTables& tables, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                             double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total);

}  // namespace mlens
