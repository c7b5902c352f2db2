// ModelErrorRun: the whole-model error of this document against a reference document, computed as
// one job, and the orderings the Model error panel shows it in. No ImGui here, so tests drive it
// directly.
//
// Contract:
//  - run_model_error pairs the reference's tensors (A) with this model's (B) by name, through the
//    HF→GGUF map when one is a Hugging Face checkpoint and the other GGUF
//    (automatic_name_alignment; its label in `name_alignment`), and compares every pair
//    (compare_models, A is the reference).
//    It returns the run with `error`, the unpaired counts, compared / failed counts and the
//    overall pooled RMSE sqrt(sum(rmse^2 * count) / sum(count)) over the compared tensors filled
//    in, or compare_models' error (E_CANCELLED when the job was cancelled).
//  - The run keeps the two models it was computed for, so the panel can tell when either
//    document closed or was reopened.
//  - sorted_tensor_rows returns indices into error.tensors ordered by `column`; rows without a
//    value in that column (failed tensors) come last in either direction, ties keep A's order.
//  - find_tensor_row: the row whose reference name (TensorError::name_a) is `name_a`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlens/analysis/model_error.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

struct ModelErrorRun {
    uint64_t reference_id = 0;  // Document::id of the reference
    std::string reference_title;
    std::shared_ptr<const Model> reference, model;
    ModelError error;
    size_t compared = 0, failed = 0;
    size_t only_reference = 0, only_model = 0;  // unpaired tensors of each side
    double pooled_rmse = 0;
    std::string name_alignment;  // "hf→gguf llama", or empty: names paired as they are
};

// `run` names the two models (and the reference document); the result is that run, measured.
Result<ModelErrorRun> run_model_error(ModelErrorRun run, JobContext* job);

enum class ErrorColumn { name, layer, types, rmse, nmse, max_abs, cosine, snr_db };

std::vector<size_t> sorted_tensor_rows(const ModelError& error, ErrorColumn column, bool descending);

std::optional<size_t> find_tensor_row(const ModelError& error, const std::string& name_a);

}  // namespace mlens
