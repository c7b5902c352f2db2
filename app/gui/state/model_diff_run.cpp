#include "model_diff_run.h"

#include <cassert>

#include "mlens/text/text_search.h"

namespace mlens {

Result<ModelDiffRun> run_model_diff(ModelDiffRun run, JobContext* job) {
    assert(run.a && run.b);
    DiffOptions options;
    options.numeric = run.numeric;
    Result<ModelDiff> diff = diff_models(*run.a, *run.b, options, job);
    if (!diff) return diff.error();
    run.diff = std::move(diff).value();
    const QuantRecipe recipe_a = quant_recipe(*run.a), recipe_b = quant_recipe(*run.b);
    run.base_a = recipe_a.base;
    run.base_b = recipe_b.base;
    run.command_a = llama_quantize_command(recipe_a);
    run.command_b = llama_quantize_command(recipe_b);
    run.recipe_changes = recipe_difference(recipe_a, recipe_b, renamed_pairs(run.diff));
    run.recipe_groups = group_recipe_changes(run.recipe_changes);
    return run;
}

std::vector<size_t> tensor_rows_matching(const ModelDiff& diff, std::string_view filter) {
    std::vector<size_t> rows;
    for (size_t i = 0; i < diff.tensors.size(); ++i) {
        const TensorChange& c = diff.tensors[i];
        if (filter.empty() || contains_folded(c.name_a, filter) || contains_folded(c.name_b, filter)) rows.push_back(i);
    }
    return rows;
}

std::vector<size_t> metadata_rows_matching(const ModelDiff& diff, std::string_view filter) {
    std::vector<size_t> rows;
    for (size_t i = 0; i < diff.metadata.size(); ++i)
        if (filter.empty() || contains_folded(diff.metadata[i].key, filter)) rows.push_back(i);
    return rows;
}

bool tensor_names_differ(const ModelDiff& diff) {
    for (const TensorChange& c : diff.tensors)
        if (!c.name_a.empty() && !c.name_b.empty() && c.name_a != c.name_b) return true;
    return false;
}

}  // namespace mlens
