// Per-row summaries of a tensor, as series shaped like its block scales (block_scales.h), so the
// same views and tables show both: which rows (output channels) are outliers.
//
// Contract:
//  - A row is ne[0] consecutive values (TensorView::row_length()); a 1-D tensor is one row.
//  - "row_rms": sqrt(mean x²) over the row's finite values (NaN when it has none);
//    "row_absmax": max |x| over them (0 when it has none). values_per_entry is the row length.
//  - A tensor of more than kMaxSeriesEntries rows (analysis_memory.h) gets one entry per run of k
//    consecutive rows, k = ceil(rows / kMaxSeriesEntries): the RMS over the finite values of the k
//    rows and their largest |x| (values_per_entry is k × the row length; the last entry may hold
//    fewer rows). An outlier row still shows in its entry's max |x|.
//  - Entries are read in chunks of whole entries, an entry longer than a chunk in pieces spread
//    over the threads, on `threads` threads (0: all cores); honours JobContext cancel
//    (E_CANCELLED) and reports progress.
//  - RowSeriesBuilder takes the same series from values someone else reads (the statistics pass,
//    stats.h ValueObserver with unit entry_values()): add() accepts any ranges of the tensor, from
//    several threads at once, each value once. An entry handed over whole in one add() is summed
//    in order, as row_series sums it; the pieces of an entry split across calls are summed apart
//    and added together (the last bits of its RMS may then differ). take() gives the two series
//    once every value was added.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "mlens/job.h"
#include "mlens/quant/block_scales.h"
#include "mlens/quant/tensor_view.h"

namespace mlens {

Result<std::vector<ScaleSeries>> row_series(const TensorView& view, JobContext* job = nullptr, unsigned threads = 0);

class RowSeriesBuilder {
public:
    // `size` values in rows of `row_length` (0 is taken as 1).
    RowSeriesBuilder(uint64_t size, uint64_t row_length);
    uint64_t entry_values() const { return m_entry_values; }
    uint64_t entries() const { return m_entries; }
    void add(uint64_t first, const float* values, uint64_t count);
    std::vector<ScaleSeries> take();

private:
    struct Sums {
        double squares = 0;
        float absmax = 0;
        uint64_t finite = 0;
        uint64_t seen = 0;  // values added, finite or not
        void merge(const Sums& o);
        static Sums sums_of(const float* v, uint64_t n);  // of n values, summed in order
    };
    uint64_t entry_end(uint64_t entry) const;
    void finish(uint64_t entry, const Sums& sums);
    void merge_piece(uint64_t entry, uint64_t whole, const Sums& piece);  // under the lock

    uint64_t m_size = 0, m_entry_values = 1, m_entries = 0;
    std::vector<float> m_rms, m_absmax;
    std::mutex m_mutex;
    std::unordered_map<uint64_t, Sums> m_partial;  // entries seen in part so far
};

}  // namespace mlens
