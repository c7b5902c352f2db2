// Error metrics between a reference tensor A and a candidate B of the same element count
// (e.g. F16 source vs its Q4_K quantization), computed in chunks on several threads.
//
// Definitions (finite pairs only; pairs where either side is NaN/Inf are counted in nonfinite):
//   rmse = sqrt(mean((a-b)^2));  nmse = sum((a-b)^2) / sum(a^2)  (0 when both are 0);
//   max_abs / mean_abs of (a-b);  cosine = a·b / (|a||b|) (1 when both are all zero);
//   snr_db = 10 log10(sum(a^2) / sum((a-b)^2))  (+inf when identical).
// worst_rows: the rows (ne[0] elements each, row index in GGUF order) with the largest squared
// error, at most `keep_rows`, largest first (ties: lower index first).
// worst_blocks: the same for quantization blocks, runs of `block_length` values (the caller's
// choice: the candidate's block, or the reference's when the candidate's values stand alone);
// none, and block_length 0 in the result, unless block_length > 1 divides row_length.
// Memory (analysis_memory.h): both sources are read in chunks of element ranges, whatever the row
// length; a row that spans chunks has its error pieced together across them, and only the
// `keep_rows` worst rows and blocks are kept. Sources read in units of more than kMaxReadUnit
// values give E_LIMIT.
#pragma once

#include <cstdint>
#include <vector>

#include "mlens/job.h"
#include "mlens/quant/float_source.h"

namespace mlens {

struct RowError {
    uint64_t row = 0;
    double rmse = 0;
    double max_abs = 0;
};

struct BlockError {
    uint64_t block = 0;  // index of the block in the tensor
    uint64_t row = 0, column = 0;  // where its first value is
    double rmse = 0;
    double max_abs = 0;
};

// The sums the figures are made of, over the finite pairs: sum((a-b)^2), sum(a^2), sum(b^2), a·b.
// Adding two comparisons' sums pools them (model_error.h's overall figures).
struct ErrorSums {
    uint64_t count = 0;
    double err2 = 0, a2 = 0, b2 = 0, ab = 0;
    void add(const ErrorSums& o) {
        count += o.count;
        err2 += o.err2;
        a2 += o.a2;
        b2 += o.b2;
        ab += o.ab;
    }
};

// rmse, nmse, cosine and snr_db of the definitions above, from their sums.
struct ErrorFigures {
    double rmse = 0, nmse = 0, cosine = 1, snr_db = 0;
};
ErrorFigures error_figures(const ErrorSums& s);

struct TensorComparison {
    uint64_t count = 0;
    uint64_t nonfinite = 0;
    double rmse = 0, nmse = 0, max_abs = 0, mean_abs = 0, cosine = 1, snr_db = 0;
    std::vector<RowError> worst_rows;
    uint64_t block_length = 0;
    std::vector<BlockError> worst_blocks;
    ErrorSums sums;
};

// Progress is reported in [progress_from, progress_to] so a caller comparing many tensors can give
// each its share of one job.
Result<TensorComparison> compare_sources(const FloatSource& a, const FloatSource& b, uint64_t row_length, size_t keep_rows = 10,
                                         JobContext* job = nullptr, unsigned threads = 0, double progress_from = 0.0,
                                         double progress_to = 1.0, uint64_t block_length = 0);

// The block worst_blocks should use for a reference and a candidate with these block lengths.
uint64_t comparison_block_length(uint64_t reference_block, uint64_t candidate_block);

}  // namespace mlens
