// mlens info PATH [--json]: what the file is, in one screen: file, format, architecture and name,
// then the first lines people look for (model_overview.h: context, embedding, layers, heads,
// vocabulary, chat template, Ollama-made and why), then parameters, type, tensors, size, bits per
// weight, diagnostics and the loadability verdict. --json adds them as "overview".
#include <iostream>

#include "cli_common.h"
#include "mlens/analysis/loadability.h"
#include "mlens/analysis/model_overview.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

namespace {

nlohmann::json summary_json(const std::string& path, const ModelSummary& s) {
    // What the file does not say is null, where the text shows "-".
    auto text = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
    nlohmann::json j = {{"path", path},
                        {"format", format_name(s.format)},
                        {"version", s.format == Format::gguf ? nlohmann::json(s.version) : nlohmann::json(nullptr)},
                        {"architecture", text(s.architecture)},
                        {"name", text(s.name)},
                        {"parameters", s.parameters},
                        {"architecture_source", text(s.architecture_source)},
                        {"tensor_count", s.tensor_count},
                        {"stored_tensor_count", s.stored_tensor_count},
                        {"tensor_bytes", s.tensor_bytes},
                        {"file_bytes", s.file_bytes},
                        {"errors", s.errors},
                        {"warnings", s.warnings}};
    j["bits_per_weight"] = s.parameters ? nlohmann::json(s.bits_per_weight) : nlohmann::json(nullptr);
    j["file_type"] = s.file_type ? nlohmann::json(*s.file_type) : nlohmann::json(nullptr);
    j["file_type_name"] = s.file_type ? nlohmann::json(s.file_type_name) : nlohmann::json(nullptr);
    j["missing_files"] = s.missing_files;
    j["declared_tensor_count"] = s.declared_tensor_count ? nlohmann::json(*s.declared_tensor_count) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json overview_json(const ModelOverview& f) {
    auto number = [](const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return {{"context_length", number(f.context_length)},
            {"embedding_length", number(f.embedding_length)},
            {"layers", number(f.layers)},
            {"heads", number(f.heads)},
            {"kv_heads", number(f.kv_heads)},
            {"vocabulary", number(f.vocabulary)},
            {"chat_template", f.chat_template},
            {"chat_template_rewrite", f.chat_template_rewrite.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.chat_template_rewrite)},
            {"ollama_made", f.ollama_made},
            {"origin_reason", f.origin_reason}};
}

void print_summary(const std::string& path, const Model& model, const ModelSummary& s, const Loadability& loads,
                   const ModelOverview& facts) {
    std::string format = format_and_version(s.format, s.version);
    if (!model.files.empty() && model.files[0].big_endian) format += " (big-endian)";
    if (model.files.size() > 1) format += ", " + std::to_string(model.files.size()) + " files";
    std::vector<std::vector<std::string>> rows = {
        {"file", escape_for_display(path)},
        {"format", format},
        {"architecture",
         s.architecture.empty() ? "-"
                                : escape_for_display(s.architecture) +
                 (s.architecture_source == "general.architecture" ? "" : " (" + s.architecture_source + ")")},
        {"name", s.name.empty() ? "-" : escape_for_display(s.name)},
    };
    for (auto& [label, value] : overview_rows(facts)) rows.push_back({label, escape_for_display(value)});
    // A split model with parts missing: every figure counts the parts present only, and says so.
    const std::string present = s.present_files_text();
    std::vector<std::vector<std::string>> rest = {
        {"parameters", human_count(s.parameters) + " (" + std::to_string(s.parameters) + ")" + present},
        {"file type", s.file_type ? s.file_type_name + " (" + std::to_string(*s.file_type) + ")" : "-"},
        {"tensors", s.tensors_text()},
        {"size", human_bytes(s.file_bytes) + " (" + std::to_string(s.file_bytes) + " bytes)" + present},
        {"bits/weight", s.parameters ? bits_per_weight_text(s.bits_per_weight) : "-"},
        {"diagnostics", plural(s.errors, "error") + ", " + plural(s.warnings, "warning")},
        {"will it load", escape_for_display(loads.summary())},
    };
    rows.insert(rows.end(), rest.begin(), rest.end());
    print_table(rows, 0);
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("info", "Format, architecture, parameter count, file type, tensor count, size, bits per weight");
    auto args = add_path_arguments(cmd, "Model file");
    cmd->callback([args, &exit_code] {
        auto model = open_or_fail(args->path, exit_code);
        if (!model) return;
        ModelSummary s = summarize(*model);
        const Loadability loads = assess_loadability(*model);
        if (args->json) {
            nlohmann::json j = summary_json(shown_path(args->path), s);
            j["loads"] = loadability_json(loads);
            j["overview"] = overview_json(model_overview(*model));
            print_json_result(j);
        } else {
            print_summary(shown_path(args->path), *model, s, loads, model_overview(*model));
        }
        exit_code = exit_status_of(*model);
    });
}

}  // namespace mlens::cli
