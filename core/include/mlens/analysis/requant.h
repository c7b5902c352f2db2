// What-if requantization: quantize a float reference (an F32/F16/BF16 tensor or any dequantized
// one) with ggml to chosen types and measure the error of each against the reference.
//
// Contract:
//  - For each requested ggml type, in the order given: rows of `row_length` values are quantized
//    with ggml_quantize_chunk and decoded with the type's to_float, in chunks, then compared with
//    the reference through compare_sources (tensor_compare.h). With an importance (imatrix.h:
//    importance_for) every type is quantized with it, row r with importance.run_of_row(r), as
//    llama-quantize does; without, with none.
//  - Without an importance, a type for which ggml_quantize_requires_imatrix is true is not run:
//    its row says needs_imatrix. A type ggml cannot quantize, or whose block does not divide the row length,
//    gets `skipped` with the reason. Neither fails the call.
//  - bits_per_weight = 8 * bytes per block / values per block.
//  - The reference size must be a multiple of row_length (E_SHAPE otherwise). Cancellable
//    (E_CANCELLED); each type has an equal share of the progress.
//  - requantized_source gives the reference passed through one type as a FloatSource (the
//    candidate requantize compares with). Reads cover whole units: rows, or, for rows longer than
//    kMaxReadUnit values (analysis_memory.h), runs of whole blocks, so no row is ever held whole;
//    without an importance matrix ggml quantizes each block by itself, so the values are those
//    of whole rows. It refuses what requantize does not run, with the reason as the message:
//    E_NEEDS_IMATRIX ("needs an importance matrix"), E_LIMIT (with an importance, rows longer
//    than kMaxReadUnit: ggml's legacy types measure the whole row, so it cannot be split), E_UNSUPPORTED_TYPE ("not a ggml type",
//    "ggml cannot quantize to this type"), E_BLOCK_SIZE ("rows of N values do not split into
//    blocks of B"), and E_SHAPE as above. The source reads the reference, which must outlive it.
//    With keep_quantized, it keeps each unit's quantized bytes after the unit's first read, so
//    that later reads of a comparison's several passes decode them instead of quantizing again
//    (concurrent reads of the same units quantize them once) — when the whole tensor in that type
//    fits in half of kAnalysisMemoryBound; a larger one quantizes again at every read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlens/analysis/tensor_compare.h"
#include "mlens/quant/imatrix.h"

namespace mlens {

struct RequantRow {
    uint32_t ggml_type = 0;
    std::string type_name;
    double bits_per_weight = 0;
    bool needs_imatrix = false;
    bool with_importance = false;  // quantized with an importance matrix
    std::string skipped;  // reason, when not run
    TensorComparison error;  // valid when !needs_imatrix && skipped.empty()
    // The requantized values are the reference's exactly (largest difference 0): the type holds
    // the reference as it is (the reference is already of that type, or is the tensor itself),
    // which says nothing of its error on float weights, so views mark the row "same values as the
    // reference" instead of printing RMSE 0 and SNR +inf.
    bool equals_reference() const { return !needs_imatrix && skipped.empty() && error.max_abs == 0; }
};

// `importance`, when set, must outlive the source and have the reference's row length.
Result<std::unique_ptr<FloatSource>> requantized_source(const FloatSource& reference, uint64_t row_length, uint32_t ggml_type,
                                                        bool keep_quantized = false, const ColumnImportance* importance = nullptr);

Result<std::vector<RequantRow>> requantize(const FloatSource& reference, uint64_t row_length, const std::vector<uint32_t>& ggml_types,
                                           JobContext* job = nullptr, unsigned threads = 0, const ColumnImportance* importance = nullptr);

// The types a requantization runs when none are named, for rows of row_length values: Q4_0,
// Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ2_XXS, IQ4_NL, IQ4_XS, without those whose block does not
// divide the row length and those that need an importance matrix when there is none; Q4_1, Q5_0
// and Q5_1 (blocks of 32) take the places of the k-quants when these do not fit. Empty when no
// type fits.
std::vector<uint32_t> default_requant_types(uint64_t row_length, bool with_importance);

}  // namespace mlens
