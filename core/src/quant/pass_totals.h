// What the chunks of one statistics pass hand in from several threads: each chunk's first-pass
// figures (value_summary.h) and its counts in the binning's slots. Internal to core/quant.
//
// Contract: PassTotals(total) adds into `total` (binning.slots() entries, cleared by the caller).
// hand_in(first, summary, counts) is thread-safe: the summary is kept by where its chunk starts
// (ordered_parts.h) and the counts are added to `total` at once. merge_into(all) merges the
// summaries in chunk order, after the pass, so that sums come out the same whichever thread
// finished a chunk first.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "util/ordered_parts.h"
#include "value_summary.h"

namespace mlens {

class PassTotals {
public:
    explicit PassTotals(std::vector<uint64_t>& total) : m_total(total) {}

    template <typename Count>
    void hand_in(uint64_t first, const ValueSummary<double>& summary, const std::vector<Count>& counts) {
        m_parts.put(first, summary);
        std::lock_guard lock(m_mutex);
        for (size_t i = 0; i < counts.size(); ++i) m_total[i] += counts[i];
    }

    void merge_into(ValueSummary<double>& all) const { m_parts.merge_into(all); }

private:
    std::vector<uint64_t>& m_total;
    std::mutex m_mutex;
    OrderedParts<ValueSummary<double>> m_parts;
};

}  // namespace mlens
