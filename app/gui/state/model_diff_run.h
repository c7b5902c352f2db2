// ModelDiffRun: what `mlens diff A B [--numeric]` answers, for two open documents, as the app's
// Diff view shows it. No ImGui here, so tests drive it directly.
//
// Contract:
//  - run_model_diff calls diff_models (model_diff.h) with the options mlens diff uses (default
//    DiffOptions: the automatic HF→GGUF name map; `numeric` as asked) on A = run.a, the other
//    document, and B = run.b, this one (A is the reference of the numeric comparison, as in
//    `mlens diff A B --numeric`), then the quantization recipes of both, their difference and
//    its groups (quant_recipe.h recipe_difference, group_recipe_changes) and both llama-quantize
//    commands. Nothing is computed that mlens diff does not compute.
//  - Without numeric the call reads no tensor data and is fast; with numeric it is one job
//    (progress, cancel → E_CANCELLED, diff_models' own error otherwise).
//  - The run keeps both models and the other document's id, so the view can tell when that
//    document was closed or reopened (paired_document.h still_open).
//  - tensor_rows_matching: indices into diff.tensors whose A or B name contains `filter`
//    (case-insensitive, contains_folded; every row for an empty filter), in diff order;
//    metadata_rows_matching likewise on the key.
//  - tensor_names_differ: some listed tensor has a name on both sides and they differ (a name map
//    aligned them); otherwise one name column says it all.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/analysis/model_diff.h"
#include "mlens/analysis/quant_recipe.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

struct ModelDiffRun {
    uint64_t other_id = 0;  // Document::id of A
    std::string other_title;
    std::shared_ptr<const Model> a, b;
    bool numeric = false;
    ModelDiff diff;
    std::string base_a, base_b;  // recipe bases ("" when nothing is quantized)
    std::string command_a, command_b;  // llama-quantize commands ("" when there is none)
    std::vector<RecipeChange> recipe_changes;
    std::vector<RecipeChangeGroup> recipe_groups;
};

Result<ModelDiffRun> run_model_diff(ModelDiffRun run, JobContext* job);

std::vector<size_t> tensor_rows_matching(const ModelDiff& diff, std::string_view filter);
std::vector<size_t> metadata_rows_matching(const ModelDiff& diff, std::string_view filter);
bool tensor_names_differ(const ModelDiff& diff);

}  // namespace mlens
