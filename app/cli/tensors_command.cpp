// mlens tensors PATH [--sort name|size|offset] [--by-layer] [--json] [--names]
#include <algorithm>
#include <iostream>

#include "cli_common.h"
#include "mlens/analysis/tensor_listing.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

// A logical tensor: a quantized tensor stored as packed weights, scale and bias is one row.
std::vector<std::string> tensor_row(const Model& model, const LogicalTensor& t) {
    const TensorInfo& main = model.tensors[t.index];
    return {escape_for_display(main.name, 80),
            escape_for_display(t.type, 60),
            shape_text(t.ne, ShapeStyle::bracketed, shape_order(model.format)),
            std::to_string(t.elements),
            t.bytes ? std::to_string(*t.bytes) : "?",
            main.presence == DataPresence::unknown ? "?" : std::to_string(main.data_offset),
            bits_per_weight_text(t.bits_per_weight())};
}

// The logical tensors in the order `key` names, as the tensor listing sorts them.
std::vector<LogicalTensor> sorted_tensors(const Model& model, const std::string& key) {
    std::vector<LogicalTensor> tensors = logical_tensors(model);
    TensorQuery query;
    if (key == "name") query.sort = TensorColumn::name;
    if (key == "offset") query.sort = TensorColumn::offset;
    if (key == "size") {
        query.sort = TensorColumn::size;
        query.descending = true;
    }
    std::vector<LogicalTensor> order;
    const Result<TensorListing> listing = list_tensors(model, tensors, {}, query);  // no pattern: never an error
    for (const TensorRow& row : listing->rows) order.push_back(tensors[row.index]);
    return order;
}

// The expert groups under the table, for models that have them.
void print_groups(const Model& model) {
    if (model.groups.empty()) return;
    std::vector<std::vector<std::string>> rows = {{"GROUP", "EXPERTS", "PARTS", "LAYOUT"}};
    for (const TensorGroup& g : model.groups) {
        std::string parts;
        for (const std::string& p : g.parts) parts += (parts.empty() ? "" : ",") + escape_for_display(p, 40);
        rows.push_back({escape_for_display(g.name, 100), std::to_string(g.count), "{" + parts + "}", g.layout});
    }
    std::cout << "\n";
    print_table(rows);
}

void print_by_layer(const Model& model, bool json) {
    nlohmann::json out = nlohmann::json::array();
    std::vector<std::vector<std::string>> rows = {{"LAYER", "TENSORS", "PARAMETERS", "BYTES", "TYPES"}};
    for (const LayerSummary& ls : summarize_layers(model)) {
        std::string types;
        for (const auto& t : ls.types) types += (types.empty() ? "" : ",") + escape_for_display(t, 60);
        std::string name = ls.layer ? "blk." + std::to_string(*ls.layer) : "other";
        rows.push_back({name, std::to_string(ls.tensors.size()), std::to_string(ls.parameters), std::to_string(ls.bytes), types});
        nlohmann::json names = nlohmann::json::array();
        for (size_t i : ls.tensors) names.push_back(model.tensors[i].name);
        out.push_back({{"layer", ls.layer ? nlohmann::json(*ls.layer) : nlohmann::json(nullptr)},
                       {"parameters", ls.parameters},
                       {"bytes", ls.bytes},
                       {"types", ls.types},
                       {"tensors", names}});
    }
    if (json)
        print_json_result(out);
    else
        print_table(rows);
}

}  // namespace

void add_tensors_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("tensors", "List logical tensors: name, type, shape, elements, bytes, offset, bits per weight");
    auto path = std::make_shared<std::string>();
    auto sort = std::make_shared<std::string>("file");
    auto json = std::make_shared<bool>(false);
    auto by_layer = std::make_shared<bool>(false);
    auto names_only = std::make_shared<bool>(false);
    cmd->add_option("PATH", *path, "Model file")->required();
    cmd->add_option("--sort", *sort, "Order: file (default), name, size (largest first), offset")
        ->check(CLI::IsMember({"file", "name", "size", "offset"}));
    cmd->add_flag("--by-layer", *by_layer, "Summarize per layer (blk.N) instead");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->add_flag("--names", *names_only, "Print only the names, one a line (what shell completion offers)")
        ->excludes("--json")
        ->excludes("--by-layer");
    cmd->callback([=, &exit_code] {
        auto model = open_or_fail(*path, exit_code);
        if (!model) return;
        exit_code = exit_status_of(*model);
        if (*by_layer) return print_by_layer(*model, *json);
        auto order = sorted_tensors(*model, *sort);
        if (*names_only) {
            for (const LogicalTensor& t : order) std::cout << escape_for_display(model->tensors[t.index].name) << "\n";
            return;
        }
        if (*json) {
            nlohmann::json out = nlohmann::json::array();
            for (const LogicalTensor& t : order) out.push_back(logical_tensor_to_json(*model, t));
            print_json_result(out);
            return;
        }
        std::vector<std::vector<std::string>> rows = {
            {"NAME", "TYPE", shape_header("SHAPE", shape_order(model->format)), "ELEMENTS", "BYTES", "OFFSET", "BPW"}};
        // A file cut short gets a DATA column naming the tensors whose bytes are gone.
        const bool cut = std::any_of(model->tensors.begin(), model->tensors.end(),
                                     [](const TensorInfo& t) { return t.presence != DataPresence::complete; });
        if (cut) rows[0].push_back("DATA");
        for (const LogicalTensor& t : order) {
            rows.push_back(tensor_row(*model, t));
            if (cut) rows.back().push_back(data_presence_name(data_presence(*model, t)));
        }
        print_table(rows);
        print_groups(*model);
    });
}

}  // namespace mlens::cli
