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
//  - Sums of squares in double: value i of an entry (or of a piece of one) is added to lane
//    i % 16, the lanes then added in lane order, on every CPU alike. Entries are read in chunks
//    of whole entries, an entry longer than a chunk in pieces spread over the threads, whose sums
//    are added in the pieces' order, so the figures are the same on every run and thread count,
//    on `threads` threads (0: all cores); honours JobContext cancel (E_CANCELLED) and reports
//    progress.
#pragma once

#include <cstdint>
#include <vector>

#include "mlens/job.h"
#include "mlens/quant/block_scales.h"
#include "mlens/quant/tensor_view.h"

namespace mlens {

Result<std::vector<ScaleSeries>> row_series(const TensorView& view, JobContext* job = nullptr, unsigned threads = 0);

}  // namespace mlens
