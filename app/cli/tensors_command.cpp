// mlens tensors PATH [--sort name|size|offset] [--by-layer] [--json]
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

std::vector<std::string> tensor_row(const TensorInfo& t) {
    char bpw[32];
    std::snprintf(bpw, sizeof bpw, "%.2f", t.bits_per_weight());
    return {escape_for_display(t.name, 80), t.type.name, shape_text(t.ne), std::to_string(t.n_elements),
            t.n_bytes ? std::to_string(*t.n_bytes) : "?", std::to_string(t.data_offset), bpw};
}

std::vector<size_t> sorted_indices(const Model& model, const std::string& key) {
    std::vector<size_t> order(model.tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto& ts = model.tensors;
    if (key == "name")
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ts[a].name < ts[b].name; });
    else if (key == "size")
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ts[a].n_bytes.value_or(0) > ts[b].n_bytes.value_or(0); });
    else if (key == "offset")
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return ts[a].file != ts[b].file ? ts[a].file < ts[b].file : ts[a].data_offset < ts[b].data_offset;
        });
    return order;
}

void print_by_layer(const Model& model, bool json) {
    nlohmann::json out = nlohmann::json::array();
    std::vector<std::vector<std::string>> rows = {{"LAYER", "TENSORS", "PARAMETERS", "BYTES", "TYPES"}};
    for (const LayerSummary& ls : summarize_layers(model)) {
        std::string types;
        for (const auto& t : ls.types) types += (types.empty() ? "" : ",") + t;
        std::string name = ls.layer ? "blk." + std::to_string(*ls.layer) : "other";
        rows.push_back({name, std::to_string(ls.tensors.size()), std::to_string(ls.parameters), std::to_string(ls.bytes), types});
        nlohmann::json names = nlohmann::json::array();
        for (size_t i : ls.tensors) names.push_back(model.tensors[i].name);
        out.push_back({{"layer", ls.layer ? nlohmann::json(*ls.layer) : nlohmann::json(nullptr)},
                       {"parameters", ls.parameters}, {"bytes", ls.bytes}, {"types", ls.types}, {"tensors", names}});
    }
    if (json) std::cout << json_text(out) << "\n";
    else print_table(rows);
}

}  // namespace

void add_tensors_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("tensors", "List tensors: name, type, shape, elements, bytes, offset, bits per weight");
    auto path = std::make_shared<std::string>();
    auto sort = std::make_shared<std::string>("file");
    auto json = std::make_shared<bool>(false);
    auto by_layer = std::make_shared<bool>(false);
    cmd->add_option("PATH", *path, "Model file")->required();
    cmd->add_option("--sort", *sort, "Order: file (default), name, size (largest first), offset")
        ->check(CLI::IsMember({"file", "name", "size", "offset"}));
    cmd->add_flag("--by-layer", *by_layer, "Summarize per layer (blk.N) instead");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([=, &exit_code] {
        auto model = open_or_report(*path);
        if (!model) { exit_code = kExitBroken; return; }
        exit_code = model->partial ? kExitBroken : kExitOk;
        if (*by_layer) return print_by_layer(*model, *json);
        auto order = sorted_indices(*model, *sort);
        if (*json) {
            nlohmann::json out = nlohmann::json::array();
            for (size_t i : order) out.push_back(tensor_to_json(model->tensors[i], model->format));
            std::cout << json_text(out) << "\n";
            return;
        }
        std::vector<std::vector<std::string>> rows = {{"NAME", "TYPE", "SHAPE", "ELEMENTS", "BYTES", "OFFSET", "BPW"}};
        for (size_t i : order) rows.push_back(tensor_row(model->tensors[i]));
        print_table(rows);
    });
}

}  // namespace mlens::cli
