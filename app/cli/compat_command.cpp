// mlens compat PATH [--json]: whether Ollama made the file (only on evidence no upstream file can
// carry, ollama_origin.h) and what Ollama's llama.cpp compatibility shim would rewrite, for the
// text loader and the clip (mmproj) loader: every edit grouped by kind, with the rule that made it.
#include <iostream>

#include "cli_common.h"
#include "mlens/compat/ollama_origin.h"
#include "mlens/compat/rewrite_plan.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/model/model_json.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

using namespace mlens::compat;

std::string counts_text(const SidePlan& p) {
    if (p.empty()) return "no edits";
    const EditCounts n = p.counts();
    std::string s;
    for (EditKind k : kEditKinds)
        if (n[static_cast<size_t>(k)]) s += (s.empty() ? "" : ", ") + std::to_string(n[static_cast<size_t>(k)]) + " " + edit_kind_name(k);
    return s;
}

std::string suffix(const std::string& rule, const std::string& note) {
    std::string s = "  [" + rule + "]";
    if (!note.empty()) s += "  " + escape_for_display(note, 160);
    return s;
}

// The name each slot has after the side's renames: data ops fill the tensor of that name.
std::vector<std::string> result_names(const Model& model, const SidePlan& p) {
    std::vector<std::string> names;
    for (const ResultTensor& t : upstream_view(model, p).tensors) names.push_back(t.name);
    return names;
}

void print_side(const Model& model, const SidePlan& p) {
    const std::vector<std::string> names = result_names(model, p);
    std::cout << plan_side_name(p.side) << " loader view: architecture " << escape_for_display(p.arch_before);
    if (p.arch_after != p.arch_before) std::cout << " → " << escape_for_display(p.arch_after);
    std::cout << "\n  " << escape_for_display(p.summary(), 2000) << "\n";
    if (p.no_mmap) std::cout << "  mmap disabled by " << p.no_mmap_rule << "\n";
    for (EditKind k : kEditKinds) {
        std::vector<std::string> lines;
        for (const KvEdit& e : p.kv_edits) {
            if (e.kind != k) continue;
            std::string l = std::string(kv_op_name(e.op)) + " " + escape_for_display(e.key);
            if (e.op == KvOp::copy) l += " ← " + escape_for_display(e.source_key);
            if (e.op != KvOp::remove) l += " = " + format_value(e.value) + " (" + format_type(e.value) + ")";
            lines.push_back(l + suffix(e.rule, e.note));
        }
        for (const TensorEdit& e : p.tensor_edits) {
            if (e.kind != k) continue;
            std::string l = std::string(tensor_op_name(e.op)) + " " + escape_for_display(e.name);
            if (e.op == TensorOp::rename) l += " → " + escape_for_display(e.new_name);
            if (e.op == TensorOp::retype) l += " → " + describe_ggml_type(e.new_type).name;
            if (e.op == TensorOp::reshape) l += " → " + shape_text(e.new_ne, ShapeStyle::bracketed, ShapeOrder::fastest_first);
            lines.push_back(l + suffix(e.rule, e.note));
        }
        if (k == EditKind::data_op) {
            for (const DataOp& d : p.data_ops) {
                std::string l = std::string(data_op_name(d.op)) + " → " + escape_for_display(names[d.dest]) + " (" +
                    describe_ggml_type(d.dest_type).name + " " + shape_text(d.dest_ne, ShapeStyle::bracketed, ShapeOrder::fastest_first) +
                    ") from";
                for (size_t src : d.sources) l += " " + escape_for_display(model.tensors[src].name);
                lines.push_back(l + suffix(d.rule, d.note));
            }
        }
        if (lines.empty()) continue;
        std::cout << "  " << edit_kind_name(k) << " (" << lines.size() << ")\n";
        for (const std::string& l : lines) std::cout << "    " << l << "\n";
    }
    for (const PlanIssue& i : p.issues) std::cout << "  issue: " << escape_for_display(i.message) << "  [" << i.rule << "]\n";
}

void print_origin(const OllamaOrigin& origin, const RewritePlan& plan) {
    if (!origin.ollama_made()) {
        std::cout << "origin: no evidence that Ollama made this file";
        if (!plan.text.empty()) std::cout << "; inference loads it as it is, without the text edits below";
        std::cout << "\n";
        return;
    }
    std::cout << "origin: Ollama-made\n";
    for (const OriginEvidence& e : origin.evidence)
        std::cout << "  evidence: " << escape_for_display(e.marker, 400) << " (" << e.reason << ")\n";
}

nlohmann::json origin_json(const OllamaOrigin& origin) {
    nlohmann::json evidence = nlohmann::json::array();
    for (const OriginEvidence& e : origin.evidence) evidence.push_back({{"marker", e.marker}, {"reason", e.reason}});
    return {{"ollama_made", origin.ollama_made()}, {"evidence", evidence}};
}

// Tensors are named by name (the stored name; a data op's destination by its resulting name),
// types as name plus ggml id, shapes in GGUF order (the output states it as "shape_order").
nlohmann::json side_json(const Model& model, const SidePlan& p) {
    const std::vector<std::string> names = result_names(model, p);
    auto type_id = [](uint32_t id) { return tensor_type_id_json(describe_ggml_type(id), Format::gguf); };
    // A rule without a note, a check gated on no arch: null, never "".
    auto text = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
    nlohmann::json j;
    j["side"] = plan_side_name(p.side);
    j["arch_before"] = p.arch_before;
    j["arch_after"] = p.arch_after;
    j["handlers"] = p.handlers;
    j["summary"] = p.summary();
    j["no_mmap"] = p.no_mmap;
    if (p.no_mmap) j["no_mmap_rule"] = p.no_mmap_rule;
    j["skip_prefixes"] = nlohmann::json::array();
    for (const SkipPrefix& s : p.skip_prefixes) j["skip_prefixes"].push_back({{"prefix", s.prefix}, {"rule", s.rule}});
    j["checks"] = nlohmann::json::array();
    for (const DetectionCheck& c : p.checks)
        j["checks"].push_back({{"rule", c.rule}, {"arch", text(c.arch)}, {"fired", c.fired}, {"detail", c.detail}});
    j["issues"] = nlohmann::json::array();
    for (const PlanIssue& i : p.issues) j["issues"].push_back({{"rule", i.rule}, {"message", i.message}});
    j["kv_edits"] = nlohmann::json::array();
    for (const KvEdit& e : p.kv_edits) {
        nlohmann::json o = {
            {"op", kv_op_name(e.op)}, {"kind", edit_kind_name(e.kind)}, {"key", e.key}, {"rule", e.rule}, {"note", text(e.note)}};
        if (e.op == KvOp::copy) o["source_key"] = e.source_key;
        if (e.op != KvOp::remove) o["result"] = typed_value_json(e.value, UINT64_MAX);
        if (e.previous) o["previous"] = typed_value_json(*e.previous, UINT64_MAX);
        j["kv_edits"].push_back(o);
    }
    j["tensor_edits"] = nlohmann::json::array();
    for (const TensorEdit& e : p.tensor_edits) {
        nlohmann::json o = {
            {"op", tensor_op_name(e.op)}, {"kind", edit_kind_name(e.kind)}, {"name", e.name}, {"rule", e.rule}, {"note", text(e.note)}};
        if (e.op == TensorOp::rename) o["new_name"] = e.new_name;
        if (e.op == TensorOp::retype) {
            o["new_type"] = describe_ggml_type(e.new_type).name;
            o["new_type_id"] = type_id(e.new_type);
        }
        if (e.op == TensorOp::reshape) o["new_shape"] = e.new_ne;
        j["tensor_edits"].push_back(o);
    }
    j["data_ops"] = nlohmann::json::array();
    for (const DataOp& d : p.data_ops) {
        nlohmann::json sources = nlohmann::json::array();
        for (size_t src : d.sources) sources.push_back(model.tensors[src].name);
        j["data_ops"].push_back({{"op", data_op_name(d.op)},
                                 {"kind", "data op"},
                                 {"dest", names[d.dest]},
                                 {"sources", sources},
                                 {"dest_type", describe_ggml_type(d.dest_type).name},
                                 {"dest_type_id", type_id(d.dest_type)},
                                 {"dest_shape", d.dest_ne},
                                 {"params", d.params},
                                 {"rule", d.rule},
                                 {"note", text(d.note)}});
    }
    nlohmann::json counts = nlohmann::json::object();
    const EditCounts n = p.counts();
    for (EditKind k : kEditKinds) counts[edit_kind_name(k)] = n[static_cast<size_t>(k)];
    j["counts"] = counts;
    j["empty"] = p.empty();
    return j;
}

}  // namespace

void add_compat_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("compat", "Show what Ollama's llama.cpp compatibility shim would rewrite");
    auto path = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("PATH", *path, "Model file")->required();
    cmd->add_flag("--json", *json, "Print every edit as JSON");
    cmd->callback([=, &exit_code] {
        auto model = open_or_fail(*path, exit_code);
        if (!model) return;
        RewritePlan plan = plan_compat(*model);
        OllamaOrigin origin = detect_ollama_origin(*model);
        if (*json) {
            nlohmann::json out = {
                {"path", shown_path(*path)},
                {"origin", origin_json(origin)},
                {"applies", plan.not_applicable.empty()},
                {"not_applicable", plan.not_applicable.empty() ? nlohmann::json(nullptr) : nlohmann::json(plan.not_applicable)},
                {"empty", plan.empty()},
                {"shape_order", shape_order_name(ShapeOrder::fastest_first)},
                {"text", side_json(*model, plan.text)},
                {"clip", side_json(*model, plan.clip)}};
            print_json_result(out);
        } else {
            print_origin(origin, plan);
            if (!plan.not_applicable.empty()) {
                std::cout << "summary: nothing to rewrite: " << plan.not_applicable
                          << "; the shim rewrites GGUF files as llama.cpp loads them\n";
            } else {
                print_side(*model, plan.text);
                print_side(*model, plan.clip);
                std::cout << "summary: text: " << counts_text(plan.text) << "; clip: " << counts_text(plan.clip) << "\n";
            }
        }
        exit_code = exit_status_of(*model);
    });
}

}  // namespace mlens::cli
