// fsck: one health pass over every tensor of a Model — broken values, broken block scales,
// dead and duplicated experts, duplicated tensors, and the region problems the readers found.
//
// Contract:
//  - Every logical tensor (logical_tensors.h) is read once, in row chunks of bounded size
//    (analysis_memory.h), on `threads` threads (parallel_job.h). F32, F16 and BF16 are checked on
//    their stored bits without converting; ggml block types are decoded with ggml's to_float
//    from the same bytes whose scales are checked; other element types and MLX tensors decode
//    through TensorView.
//  - Value findings: F_NAN and F_INF (error) for NaN and ±Inf values; F_BEYOND_F16 (warning) for
//    finite values with |x| > 65504 in F32 and BF16 tensors (they become Inf when converted to
//    F16); F_ZERO_ROWS (warning) for rows whose every value is zero; F_ZERO_COLUMNS (warning) for
//    columns (index along ne[0]) zero in every row of a tensor of two rows or more whose rows hold
//    at most kFsckMaxColumns values; F_ZERO_TENSOR (warning) for a tensor (not an expert) whose
//    every value is zero.
//  - Scale findings (field names the scale): F_SCALE_NAN, F_SCALE_INF (error), F_SCALE_SUBNORMAL
//    (info), F_SCALE_ZERO (warning: a zero scale in a block whose values are not all zero, so the
//    block keeps only its offset). Checked: the fp16 `d` of Q4_0 Q5_0 Q8_0 IQ4_NL IQ4_XS IQ2_*
//    IQ3_* IQ1_S TQ1_0 TQ2_0 Q1_0 Q2_0 Q3_K Q6_K, `d` and `m` of Q4_1 Q5_1, `d` and `dmin` of Q2_K
//    Q4_K Q5_K, the fp32 `d` of Q8_K, the E8M0 `scale` of MXFP4 (0xFF is NaN); MLX `scale` and
//    (affine) `bias` per group; an MLX `global_scale`. K-quant sub-block scales are 4- or 6-bit
//    integers times `d`, so they are broken exactly when `d` is and are not reported again.
//  - Experts: a tensor stacked as [.., .., experts] (ne.size() == 3 and an expert group, or a
//    GGUF name with "_exps") is checked per expert: F_DEAD_EXPERT (warning) when every value of
//    an expert is zero (its zero rows are then not listed again), F_DUPLICATE_EXPERT (warning)
//    when an expert's bytes equal an earlier expert's (`other_expert`). Per-expert tensors of an
//    Ollama group are experts too. F_DUPLICATE_TENSOR (warning): a tensor whose type, shape and
//    bytes equal an earlier tensor's (`other_tensor`). Candidates are found by hashing each row
//    in the same pass and confirmed by comparing the bytes (MLX tensors: their values). All-zero
//    tensors and dead experts are not reported as duplicates.
//  - Region findings: every reader diagnostic about where tensor data lies (overlap, out of the
//    file, truncated, misaligned) that listed_diagnostics (truncation.h) lists is copied with its
//    code, severity, field and offset; a truncation summary is followed by one E_TRUNCATED_DATA
//    error per tensor it cut (tensor and index set, offset at its data, message "cut: " and
//    cut_tensor_text), by name in natural order, in place of the readers' out-of-bounds rows.
//    Such a row (is_cut_tensor_row) is a detail of its summary, listed under it: count() leaves it
//    out, so that fsck's error count is check's, which lists the cut tensors under the summary too.
//    Every tensor wholly inside its file is scanned, and of a cut tensor of one entry and one
//    expert the whole rows present (counted in tensors_scanned and tensors_scanned_in_part; they
//    get no all-zero, zero-column or duplicate verdict), so a cut file has the bytes that exist
//    checked; a tensor with no whole row present, or stacked experts or MLX companions cut short,
//    is not scanned. F_NOT_SCANNED (warning) names a tensor that
//    cannot be decoded; F_READ_FAILED (error) a chunk whose read failed.
//  - Each finding is per tensor and code (and field): `count` occurrences and the locations of the
//    first kFsckMaxLocations in tensor order, each with the element index in the logical tensor,
//    expert, row (within the expert), column, block (within the row: ggml blocks, MLX groups) and
//    the absolute offset in file `file` of the bytes concerned (the scale for scale findings).
//  - Region findings come first, in the order above; the others follow sorted by tensor order, then
//    severity (errors first), code name and field (natural order). The result is the same for any
//    thread count. Cancel gives E_CANCELLED.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

inline constexpr size_t kFsckMaxLocations = 8;
inline constexpr uint64_t kFsckMaxColumns = 1u << 20;

enum class FindingSeverity { info, warning, error };
const char* finding_severity_name(FindingSeverity s);  // "info", "warning", "error"

struct FsckLocation {
    uint64_t element = 0;  // index in the logical tensor
    std::optional<uint64_t> expert;
    std::optional<uint64_t> row;  // within the expert when `expert` is set
    std::optional<uint64_t> column;
    std::optional<uint64_t> block;  // within the row
    uint32_t file = 0;
    std::optional<uint64_t> offset;  // absolute in Model::files[file]
};

struct Finding {
    FindingSeverity severity = FindingSeverity::warning;
    ErrorCode code = ErrorCode::F_NOT_SCANNED;  // F_* or a reader diagnostic code
    std::string field;  // the scale ("d", "dmin", "scale", ...) or the diagnostic field
    std::string tensor;  // name; empty for a finding not about one tensor
    std::optional<size_t> tensor_index;  // into Model::tensors (the logical tensor's main entry)
    uint64_t count = 1;
    std::vector<FsckLocation> locations;
    std::optional<std::string> other_tensor;
    std::optional<uint64_t> other_expert;
    std::string message;  // one line, escaped for display
};

struct FsckReport {
    std::vector<Finding> findings;
    uint64_t tensors = 0;  // logical tensors
    uint64_t tensors_scanned = 0;
    uint64_t tensors_scanned_in_part = 0;  // of tensors_scanned: cut tensors of which the whole rows present were
    uint64_t values_scanned = 0;
    uint64_t bytes_scanned = 0;  // stored bytes read
    // Findings of severity s, the cut-tensor rows under a truncation summary left out.
    size_t count(FindingSeverity s) const;
};

// A tensor a truncation cut, listed under the truncation summary (the contract above).
bool is_cut_tensor_row(const Finding& f);

// Whether fsck copies a reader diagnostic of this code as a region finding (overlap, out of the
// file, truncated, misaligned).
bool is_region_diagnostic(ErrorCode code);

Result<FsckReport> fsck_model(const Model& model, JobContext* job = nullptr, unsigned threads = 2);

// "error F_NAN blk.0.attn_q.weight expert 3 row 2 block 1 offset=1234: 256 NaN values" — the
// line `mlens fsck` prints.
std::string finding_line(const Finding& f);

}  // namespace mlens
