// mlens recipe PATH [--json]: how a model was quantized (analysis/quant_recipe.h): provenance
// keys, the types as runs of layers per tensor kind ("attn_q  0–31  Q4_K": recipe_runs) with bits per
// weight, and the llama-quantize command that reproduces the mix. --json keeps the full layer map.
#include <iostream>

#include "cli_common.h"
#include "mlens/analysis/quant_recipe.h"
#include "mlens/model/model_json.h"
#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "terminal_output.h"

namespace mlens::cli {

namespace {

nlohmann::json cell_json(const RecipeCell& c) { return {{"tensor", c.tensor}, {"type", c.type}, {"bits_per_weight", c.bits_per_weight}}; }

nlohmann::json recipe_json(const std::string& path, const QuantRecipe& r) {
    auto text = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
    nlohmann::json provenance = nlohmann::json::array(), layers = nlohmann::json::array(), other = nlohmann::json::array();
    for (const auto& [key, value] : r.provenance) provenance.push_back({{"key", key}, {"value", value}});
    for (const RecipeLayerRow& row : r.layers) {
        nlohmann::json cells = nlohmann::json::array();
        for (const auto& c : row.cells) cells.push_back(c ? cell_json(*c) : nlohmann::json(nullptr));
        layers.push_back({{"layer", row.layer}, {"cells", cells}});
    }
    for (const RecipeCell& c : r.other) other.push_back(cell_json(c));
    return {{"path", path},
            {"provenance", provenance},
            {"imatrix", r.imatrix},
            {"kinds", r.kinds},
            {"layers", layers},
            {"other", other},
            {"base", text(r.base)},
            {"ftype", text(r.ftype)},
            {"token_embedding_type", text(r.token_embedding_type)},
            {"output_tensor_type", text(r.output_type)},
            {"rules", r.rules},
            {"command", text(llama_quantize_command(r))},
            {"no_command", text(r.no_command)}};
}

void print_recipe(const std::string& path, const QuantRecipe& r) {
    std::cout << escape_for_display(path) << "\n";
    if (!r.provenance.empty()) {
        std::cout << "provenance\n";
        std::vector<std::vector<std::string>> rows;
        for (const auto& [key, value] : r.provenance) rows.push_back({"  " + escape_for_display(key, 80), value});
        print_table(rows, 0);
    }
    if (!r.layers.empty()) {
        std::cout << "types by kind and layer\n";
        std::vector<std::vector<std::string>> rows = {{"  KIND", "LAYERS", "TYPE", "BPW"}};
        for (const RecipeRun& run : recipe_runs(r)) {
            std::string layers = std::to_string(run.first_layer);
            if (run.last_layer != run.first_layer) layers += "\xE2\x80\x93" + std::to_string(run.last_layer);  // en dash
            rows.push_back(
                {"  " + escape_for_display(short_kind(run.kind), 80), layers, run.type, bits_per_weight_text(run.bits_per_weight)});
        }
        print_table(rows);
    }
    if (!r.other.empty()) {
        std::cout << "other tensors\n";
        std::vector<std::vector<std::string>> rows = {{"  TENSOR", "TYPE", "BPW"}};
        for (const RecipeCell& c : r.other)
            rows.push_back({"  " + escape_for_display(c.tensor, 200), c.type, bits_per_weight_text(c.bits_per_weight)});
        print_table(rows);
    }
    if (!r.no_command.empty()) {
        std::cout << "no llama-quantize command: " << r.no_command << "\n";
        return;
    }
    std::cout << "llama-quantize command (base " << r.base << ", " << r.rules.size() << (r.rules.size() == 1 ? " rule" : " rules")
              << ")\n";
    print_command_line("  " + llama_quantize_command(r));
}

}  // namespace

void add_recipe_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("recipe", "How a model was quantized, and the llama-quantize command that reproduces it");
    auto args = add_path_arguments(cmd, "Model file, safetensors folder, or Ollama store model");
    cmd->callback([=, &exit_code] {
        auto model = open_or_fail(args->path, exit_code);
        if (!model) return;
        exit_code = exit_status_of(*model);
        const QuantRecipe r = quant_recipe(*model);
        if (args->json)
            print_json_result(recipe_json(shown_path(args->path), r));
        else
            print_recipe(shown_path(args->path), r);
    });
}

}  // namespace mlens::cli
