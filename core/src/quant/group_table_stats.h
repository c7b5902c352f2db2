// The statistics' pass over a source with code groups whose value tables repeat (float_source.h):
// ggml's Q4_0, Q5_0 and IQ4_NL, whose groups' values are a half-float scale times a fixed factor
// per code, take a few thousand distinct tables however large the tensor. Internal to
// core/quant; stats.h states the figures' contract.
//
// Contract:
//  - count_group_tables counts, over the whole source, how often each code occurs with each
//    distinct value table: each group's codes are counted (group_code_counts.h) and added to the
//    row of its table, nothing decoded, binned or summed. A table is looked up by the bits of its
//    first value and compared whole with the table found. It gives nullopt, and the caller takes
//    another route, for a source without code groups, with offset groups or with no value; and,
//    counting no further, for one with a table holding a NaN or an infinity, with two different
//    tables whose first values have the same bits, or whose distinct tables times their codes
//    pass a 32nd of its values (at least 2^16 and at most 2^20 entries). Distinct tables are
//    counted over every thread, so each refusal is a property of the source, not of the threads.
//    Honours the job's cancel and reports progress over [progress_from, progress_to].
//  - From the tables, each distinct value is taken once, weighted by its count: group_table_range
//    gives the least and greatest value (of each table's least and greatest code that occurs:
//    tables are monotone in the code); summarize_group_tables the first pass's figures
//    (value_summary.h) and the counts in `binning`'s slots (binning.slots() entries), each value
//    binned by binning.h's rule, power sums in double about the middle of `binning`'s range,
//    taken table by table in the order of their first values' bits: the figures do not depend on
//    the threads or the chunks. It honours the job's cancel and reports progress over
//    [progress_from, progress_to].
// Decision (decode_bench, perf): tables, not the code-group pass, once the tables repeat. That
// pass read the source twice (its range first) and binned and summed 16 or 32 entries a group;
// the tables need one read, one vector add of a group's counts to its row, and work per distinct
// table. Counting each code of Q4_0's 4-bit groups into step tables (step_table_stats.h) ran
// slower than either: consecutive increments of one of 16 counters wait on each other.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "binning.h"
#include "mlens/job.h"
#include "mlens/quant/float_source.h"
#include "value_summary.h"

namespace mlens {

struct GroupTables {
    uint32_t codes = 0;  // entries per table
    std::vector<float> values;  // `codes` per table: the table's values, tables ascending by their first value's bits
    std::vector<uint64_t> counts;  // `codes` per table: how often each code occurs with it
};

Result<std::optional<GroupTables>> count_group_tables(const FloatSource& src, JobContext* job, unsigned threads, double progress_from,
                                                      double progress_to);

ValueBounds group_table_range(const GroupTables& tables);

Status summarize_group_tables(const GroupTables& tables, const Binning& binning, JobContext* job, unsigned threads, double progress_from,
                              double progress_to, ValueSummary<double>& all, std::vector<uint64_t>& total);

}  // namespace mlens
