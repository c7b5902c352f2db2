// Importance matrices: the files llama.cpp's llama-imatrix writes (the GGUF format and the legacy
// .dat), read as per-tensor, per-expert activation statistics, and turned into the per-column
// weights llama-quantize hands to ggml_quantize_chunk.
//
// Contract:
//  - The content decides the format, never the name. GGUF: a GGUF file whose tensors pair up as
//    "<name>.in_sum2" (F32, ne = [columns, experts]) and "<name>.counts" (F32, one value per
//    expert), with the keys imatrix.datasets (string array), imatrix.chunk_count and
//    imatrix.chunk_size when present. Legacy: int32 entry count, then per entry int32 name length,
//    the name, int32 ncall, int32 value count, that many float32 values; then optionally int32
//    chunk count, int32 dataset-name length and the name. Everything little-endian.
//  - sums are as stored: GGUF holds raw sums of squared activations and token counts per expert;
//    legacy holds (sum / tokens) * ncall and ncall, one count for every expert.
//  - read_imatrix reads only the structure and the counts; sums are read on demand (read_sums),
//    so a file of any size opens in bounded memory. Every count, length and range is checked
//    against the bytes the file has before it is used: E_NOT_IMATRIX (neither layout; a GGUF
//    without in_sum2/counts tensors), E_TRUNCATED (legacy: a field past the end, with its
//    offset), E_COUNT (legacy: counts that are negative or cannot fit in the bytes left; nothing
//    is reserved from a count), E_LIMIT (legacy: more than 2^20 entries), E_IMATRIX_VALUE (GGUF:
//    a count that is NaN, infinite, negative or beyond 2^53, naming the entry, the expert and the
//    count's offset),
//    E_IMATRIX_SHAPE (GGUF: a tensor without its pair, not F32, counts that do not match the
//    sums' experts, more than 2^20 experts), E_IO. A GGUF the reader reports errors in fails with the first of them.
//    Legacy keeps no row length: an entry is read as one expert of all its values
//    (importance_for in requant_inputs.h splits it by the weight's row length).
//  - Sums are checked as they are read (read_sums, importance, importance_for, summarize_entry):
//    a sum that is NaN, infinite or negative fails with E_IMATRIX_VALUE naming the entry, the
//    column (and expert), the value and its offset, so no importance is ever made from it.
//  - looks_like_imatrix is a cheap test of the first bytes for resolve (target.h): a GGUF whose
//    general.type is "imatrix" among its first 64 keys, or a legacy file whose first entry and
//    entry count are plausible and fit the file.
//  - importance gives what llama-quantize passes to ggml per column: GGUF sums / count of that
//    expert (1 where the expert saw no token); legacy sums / ncall (the sums as stored when
//    ncall is 0). summarize_entry gives per expert the count, the total of its sums and its
//    columns never activated (sum 0), the experts never activated (count 0), and a histogram of
//    log10 of every activated column's importance, equal bins over [min, max] of the logarithms
//    (columns with importance 0 counted apart); two passes reading the sums 2^20 values at a
//    time, so a file claiming 2^38 columns is summarized in bounded memory (and can be cancelled).
//  - importance_for gives the importance a tensor (or one expert of it) is quantized with, as
//    llama-quantize does: the entry named like the tensor; each expert's run of row_length values
//    serves that expert's rows. A GGUF entry must have row_length columns; a legacy entry, whose
//    values are all experts' end to end, is split into runs of row_length. Errors: E_NOT_FOUND (no
//    entry of that name), E_IMATRIX_SHAPE (columns or experts that do not fit the tensor: the
//    message gives both), E_LIMIT (more than kAnalysisMemoryBound / 4 bytes of importance).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/io/byte_source.h"
#include "mlens/job.h"
#include "mlens/quant/stats.h"
#include "mlens/result.h"

namespace mlens {

enum class ImatrixFormat { gguf, legacy };
const char* imatrix_format_name(ImatrixFormat f);  // "GGUF", "legacy .dat"

struct ImatrixEntry {
    std::string name;  // the weight tensor's name, e.g. "blk.0.ffn_down.weight"
    uint64_t columns = 0;  // values per expert: the weight's row length
    uint64_t experts = 1;  // matrices: 1, or the experts of a stacked expert tensor
    std::vector<double> counts;  // per expert (GGUF: tokens; legacy: ncall, one value)
    uint64_t sums_offset = 0;  // absolute offset of experts × columns float32, expert-major
    uint64_t counts_offset = 0;  // absolute offset of the counts (GGUF float32; legacy int32)
    double count_of(uint64_t expert) const { return counts.size() == 1 ? counts[0] : counts[expert]; }
};

struct Imatrix {
    ImatrixFormat format = ImatrixFormat::gguf;
    ByteSourcePtr source;
    std::vector<std::string> datasets;
    std::optional<uint64_t> chunk_count;  // chunks the statistics were collected over
    std::optional<uint64_t> chunk_size;  // tokens per chunk (GGUF only)
    std::vector<ImatrixEntry> entries;  // file order

    const ImatrixEntry* find(std::string_view tensor_name) const;
};

bool looks_like_imatrix(const ByteSource& source);
Result<Imatrix> read_imatrix(ByteSourcePtr source);
Result<Imatrix> open_imatrix(const std::string& path);

// The stored sums of one expert: `columns` values.
Result<std::vector<float>> read_sums(const Imatrix& imatrix, const ImatrixEntry& entry, uint64_t expert);
// Per-column importance of one expert, as llama-quantize computes it.
Result<std::vector<float>> importance(const Imatrix& imatrix, const ImatrixEntry& entry, uint64_t expert);

struct ImatrixExpertSummary {
    double count = 0;
    double sum = 0;  // of its stored sums
    uint64_t zero_columns = 0;  // columns whose sum is 0
};

struct ImatrixEntrySummary {
    std::vector<ImatrixExpertSummary> experts;
    uint64_t inactive_experts = 0;  // count 0
    uint64_t zero_columns = 0;  // over all experts
    double min_importance = 0, max_importance = 0, mean_importance = 0;  // over activated columns
    Histogram log10_importance;  // activated columns with importance > 0
    uint64_t zero_importance = 0;  // activated columns with importance 0
};

// Importance per column for the rows of one tensor: `values` holds runs of row_length values;
// row r uses run r / rows_per_run.
struct ColumnImportance {
    std::string entry;  // the imatrix entry used
    uint64_t row_length = 0;
    uint64_t rows_per_run = 0;
    std::vector<float> values;
    const float* run_of_row(uint64_t row) const { return values.data() + (row / rows_per_run) * row_length; }
};

// `rows`: the rows of the reference (of the expert slice when `expert` is set).
Result<ColumnImportance> importance_for(const Imatrix& imatrix, std::string_view tensor, uint64_t row_length, uint64_t rows,
                                        std::optional<uint64_t> expert);

Result<ImatrixEntrySummary> summarize_entry(const Imatrix& imatrix, const ImatrixEntry& entry, uint32_t bins = 64,
                                            JobContext* job = nullptr);

}  // namespace mlens
