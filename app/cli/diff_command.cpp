// mlens diff A B [--numeric] [--json]
// Metadata and tensor differences of two models; with --numeric, the error of every paired tensor;
// then the difference of their quantization recipes (quant_recipe.h): bases, retyped tensors by kind
// and layers, and both llama-quantize commands. Exit 1 when a model did not open cleanly or a
// tensor's data could not be read for --numeric (each such tensor's error on stderr).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "terminal_output.h"
#include "cli_job.h"
#include "mlens/analysis/model_diff.h"
#include "mlens/analysis/quant_recipe.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

// The side a key or tensor is missing from reads null; value types are spelled as in dump
// (type plus element_type), values as the text shows them. Both sides' shapes are in GGUF order
// (ne, fastest first) whatever the formats, so that they compare directly.
nlohmann::json diff_json(const ModelDiff& d) {
    auto text = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
    auto type = [](const std::optional<ValueType>& t) { return t ? nlohmann::json(value_type_name(*t)) : nlohmann::json(nullptr); };
    auto shape = [](const std::string& name, const std::vector<uint64_t>& ne) {
        return name.empty() ? nlohmann::json(nullptr) : nlohmann::json(ne);
    };
    nlohmann::json meta = nlohmann::json::array(), tensors = nlohmann::json::array(), layers = nlohmann::json::array();
    for (const MetadataChange& m : d.metadata) {
        const bool in_a = m.kind != MetadataChangeKind::added, in_b = m.kind != MetadataChangeKind::removed;
        meta.push_back({{"change", metadata_change_name(m.kind)},
                        {"key", m.key},
                        {"type_a", type(m.value_type_a)},
                        {"element_type_a", type(m.element_type_a)},
                        {"type_b", type(m.value_type_b)},
                        {"element_type_b", type(m.element_type_b)},
                        {"value_a", in_a ? nlohmann::json(m.value_a) : nlohmann::json(nullptr)},
                        {"value_b", in_b ? nlohmann::json(m.value_b) : nlohmann::json(nullptr)},
                        {"name_a", text(m.name_a)},
                        {"name_b", text(m.name_b)}});
    }
    for (const TensorChange& c : d.tensors) {
        nlohmann::json t = {{"changes", tensor_change_names(c)},
                            {"name_a", text(c.name_a)},
                            {"name_b", text(c.name_b)},
                            {"type_a", text(c.type_a)},
                            {"type_b", text(c.type_b)},
                            {"shape_a", shape(c.name_a, c.shape_a)},
                            {"shape_b", shape(c.name_b, c.shape_b)}};
        if (c.error)
            t["error"] = {{"rmse", c.error->rmse},
                          {"nmse", json_number(c.error->nmse)},
                          {"max_abs", c.error->max_abs},
                          {"cosine", c.error->cosine},
                          {"snr_db", json_number(c.error->snr_db)}};
        if (!c.failed.empty()) t["failed"] = c.failed;
        tensors.push_back(std::move(t));
    }
    for (const LayerError& l : d.layers)
        layers.push_back({{"layer", l.layer},
                          {"tensors", l.tensors},
                          {"rmse", l.rmse},
                          {"max_abs", l.max_abs},
                          {"worst_tensor", l.worst_tensor},
                          {"worst_nmse", json_number(l.worst_nmse)}});
    return {{"name_map", text(d.name_map)},
            {"shape_order", shape_order_name(ShapeOrder::fastest_first)},
            {"metadata", meta},
            {"tensors", tensors},
            {"layers", layers}};
}

// The quantization recipes of both sides and the tensors whose types differ (quant_recipe.h).
nlohmann::json recipe_json(const QuantRecipe& a, const QuantRecipe& b, const std::map<std::string, std::string>& b_to_a) {
    auto text = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
    nlohmann::json changes = nlohmann::json::array();
    for (const RecipeChange& c : recipe_difference(a, b, b_to_a))
        changes.push_back({{"tensor", c.tensor}, {"type_a", text(c.from)}, {"type_b", text(c.to)}});
    return {{"base_a", text(a.base)},
            {"base_b", text(b.base)},
            {"command_a", text(llama_quantize_command(a))},
            {"command_b", text(llama_quantize_command(b))},
            {"changes", changes}};
}

// Retyped tensors grouped by short kind and change: "attn_v  layers 0, 1  Q6_K → Q5_K".
void print_recipe_difference(const QuantRecipe& a, const QuantRecipe& b, const std::map<std::string, std::string>& b_to_a) {
    const std::vector<RecipeChange> changes = recipe_difference(a, b, b_to_a);
    if (changes.empty() && a.base == b.base) return;
    std::cout << "recipe (" << plural(changes.size(), "tensor") << " typed differently)\n";
    std::vector<std::vector<std::string>> rows = {{"  base", a.base.empty() ? "-" : a.base, b.base.empty() ? "-" : b.base}};
    for (const RecipeChangeGroup& g : group_recipe_changes(changes)) {
        const std::string where = recipe_group_layers_text(g);
        rows.push_back({"  " + escape_for_display(short_kind(g.kind), 80), where.empty() ? "-" : where,
                        (g.from.empty() ? "-" : g.from) + "\xE2\x86\x92" + (g.to.empty() ? "-" : g.to)});
    }
    print_table(rows, 0);
    print_command_line("  A: " + llama_quantize_command(a));
    print_command_line("  B: " + llama_quantize_command(b));
}

void print_diff(const ModelDiff& d, bool numeric) {
    if (d.empty()) {
        std::cout << "no differences\n";
        return;
    }
    if (!d.name_map.empty()) std::cout << "tensor names aligned by " << d.name_map << "\n";
    if (!d.metadata.empty()) {
        std::cout << "metadata (" << plural(d.metadata.size(), "difference") << ")\n";
        std::vector<std::vector<std::string>> rows;
        for (const MetadataChange& m : d.metadata) {
            rows.push_back({metadata_change_mark(m.kind), escape_for_display(m.key, 80),
                            escape_for_display(metadata_side_text(m, DiffSide::a), 60),
                            escape_for_display(metadata_side_text(m, DiffSide::b), 60)});
        }
        print_table(rows, 0);
    }
    if (!d.tensors.empty()) {
        std::cout << "tensors (" << plural(d.tensors.size(), "difference") << ")\n";
        std::vector<std::vector<std::string>> rows = {{"CHANGE", "A", "B", "TYPE", "SHAPE"}};
        if (numeric) rows[0].insert(rows[0].end(), {"RMSE", "NMSE", "COSINE"});
        for (const TensorChange& c : d.tensors) {
            std::string kinds;
            for (const std::string& k : tensor_change_names(c)) kinds += (kinds.empty() ? "" : ",") + k;
            std::vector<std::string> row = {kinds, c.name_a.empty() ? "-" : escape_for_display(c.name_a, 80),
                                            c.name_b.empty() ? "-" : escape_for_display(c.name_b, 80), tensor_type_text(c),
                                            tensor_shape_text(c)};
            if (numeric) {
                if (c.error)
                    row.insert(row.end(), {number_text(c.error->rmse), number_text(c.error->nmse), cosine_text(c.error->cosine)});
                else if (!c.failed.empty())
                    row.push_back(escape_for_display(c.failed, 80));
            }
            rows.push_back(std::move(row));
        }
        print_table(rows);
    }
    if (numeric && !d.layers.empty()) {
        std::cout << "per layer\n";
        std::vector<std::vector<std::string>> rows = {{"LAYER", "TENSORS", "RMSE", "MAX|E|", "WORST TENSOR"}};
        for (const LayerError& l : d.layers)
            rows.push_back({l.layer < 0 ? "-" : std::to_string(l.layer), std::to_string(l.tensors), number_text(l.rmse),
                            number_text(l.max_abs), escape_for_display(l.worst_tensor, 80)});
        print_table(rows);
    }
}

}  // namespace

void add_diff_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("diff", "Differences in metadata and tensors between two models");
    auto a_path = std::make_shared<std::string>();
    auto b_path = std::make_shared<std::string>();
    auto numeric = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    cmd->add_option("A", *a_path, "First model")->required();
    cmd->add_option("B", *b_path, "Second model")->required();
    cmd->add_flag("--numeric", *numeric, "Also compare the values of every paired tensor (A is the reference)");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([=, &exit_code] {
        exit_code = kExitBroken;
        std::optional<Model> a, b;
        if (!open_both(*a_path, *b_path, a, b)) return;
        DiffOptions options;
        options.numeric = *numeric;
        auto d = [&] {
            CliJob progress("diff");
            return diff_models(*a, *b, options, progress.job());
        }();
        if (!d) {
            exit_code = fail("", d.error());
            return;
        }
        exit_code = std::max(exit_status_of(*a), exit_status_of(*b));
        // A tensor whose data could not be read leaves the comparison incomplete: its error on
        // stderr and exit status 1, beside the result (the cell says the same).
        for (const TensorChange& c : d->tensors)
            if (c.read_error) exit_code = std::max(exit_code, fail(c.read_error_path, c.name_a, *c.read_error));
        const QuantRecipe recipe_a = quant_recipe(*a), recipe_b = quant_recipe(*b);
        if (*json) {
            nlohmann::json out = diff_json(*d);
            out["recipe"] = recipe_json(recipe_a, recipe_b, renamed_pairs(*d));
            print_json_result(out);
        } else {
            print_diff(*d, *numeric);
            print_recipe_difference(recipe_a, recipe_b, renamed_pairs(*d));
        }
    });
}

}  // namespace mlens::cli
