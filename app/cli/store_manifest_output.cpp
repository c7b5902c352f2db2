// One model of a store: manifest, config, layers with their blobs, text layers, and on request
// the blobs' verification and the model's logical tensors and expert groups. A model of a
// registry (ollama://) the same, read where it lives (registry_view.h): its manifest URL in
// place of the manifest file, no modification time ("-", JSON null), "registry" in the BLOB
// column, no export plans, and a verdict from what its manifest, config, text layers and opened
// model report (its digests are hashed by `mlens verify ollama://...`).
#include <algorithm>
#include <iostream>

#include "cli_common.h"
#include "command_cache.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/ollama/config_fields.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/ollama/registry_view.h"
#include "mlens/ollama/store_check.h"
#include "mlens/ollama/store_model.h"
#include "mlens/ollama/store_summary.h"
#include "mlens/open/target.h"
#include "mlens/text/escape.h"
#include "mlens/text/nearest_name.h"
#include "mlens/text/plural.h"
#include "mlens/text/readable_text.h"
#include "store_export_output.h"
#include "store_output.h"

namespace mlens::cli {

namespace {

constexpr size_t kJsonTextChars = 4096;
constexpr size_t kTextChars = 20000;
constexpr size_t kTextLines = 40;
constexpr size_t kLicenseLines = 8;

// The config as JSON: lists as lists with their full length beside them (a list holds at most
// kMaxConfigListItems), and whatever the config does not say as null.
nlohmann::json config_json(const ModelConfig& c) {
    auto text = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(escape_for_display(s, 400)); };
    auto list = [](const ConfigList& l) {
        if (l.count == 0) return nlohmann::json(nullptr);
        nlohmann::json items = nlohmann::json::array();
        for (const std::string& i : l.items) items.push_back(escape_for_display(i, 400));
        return items;
    };
    auto number = [](const std::optional<uint64_t>& n) { return n ? nlohmann::json(*n) : nlohmann::json(nullptr); };
    nlohmann::json j = {{"draft", nullptr}, {"rootfs", nullptr}};
    for (const auto& f : kConfigTextFields) j[f.key] = text(c.*f.member);
    for (const auto& f : kConfigListFields) {
        j[f.key] = list(c.*f.member);
        j[std::string(f.key) + "_count"] = (c.*f.member).count;
    }
    for (const auto& f : kConfigNumberFields) j[f.key] = number(c.*f.member);
    if (c.draft) {
        j["draft"] = nlohmann::json::object();
        for (const auto& f : kConfigDraftFields) j["draft"][f.key] = text(*c.draft.*f.member);
    }
    if (c.has_rootfs)
        j["rootfs"] = {{"type", text(c.rootfs_type)}, {"diff_ids", list(c.rootfs_diff_ids)}, {"diff_ids_count", c.rootfs_diff_ids.count}};
    return j;
}

// The BLOB cell: "found", or why not ("registry" for a registry's model, whose blobs are no
// files). The blob's file name is the digest again: --json has it.
std::string blob_status(const LayerView& lv, bool registry) {
    if (!lv.layer.blob) return "invalid digest";
    if (registry) return "registry";
    if (!lv.blob) return "skipped";
    return lv.blob->found() ? "found" : std::string(code_name(lv.blob->error->code));
}

// The VERIFY cell from the check's digest pass: "ok", "MISMATCH", another error code, or "-".
std::string verify_text(const LayerView& lv, const ModelCheck& check) {
    if (!lv.blob || !lv.blob->found()) return "-";
    auto it = check.failed_layers.find(lv.layer.field);
    if (it == check.failed_layers.end()) return check.digests_verified ? "ok" : "-";
    if (it->second.code == ErrorCode::E_DIGEST_MISMATCH) return "MISMATCH";
    return check.digests_verified ? std::string(code_name(it->second.code)) : "-";
}

// The layers grouped by media type, in the order the manifest first names each (the config
// first), as the app shows them: a line per group (kind, count, bytes, failures, media type),
// then one row per layer with its digest cut to 12 digits (--json has it whole).
void print_layer_groups(const std::vector<const LayerView*>& all, const std::vector<std::string>& verified, bool verify,
                        const ModelCheck& check, bool registry) {
    std::vector<std::vector<size_t>> groups;
    for (size_t i = 0; i < all.size(); ++i) {
        auto same_type = [&](const std::vector<size_t>& g) { return all[g.front()]->layer.media_type == all[i]->layer.media_type; };
        auto it = std::find_if(groups.begin(), groups.end(), same_type);
        if (it == groups.end())
            groups.push_back({i});
        else
            it->push_back(i);
    }
    std::cout << "\nlayers (" << all.size() << ", by media type)\n";
    for (const std::vector<size_t>& group : groups) {
        const ManifestLayer& first = all[group.front()]->layer;
        uint64_t bytes = 0;
        size_t failed = 0;
        for (size_t i : group) {
            bytes += all[i]->layer.size;
            failed += check.failed_layers.count(all[i]->layer.field) || (all[i]->blob && !all[i]->blob->found());
        }
        std::cout << "\n"
                  << layer_kind_name(first.kind) << " \xC2\xB7 " << plural(group.size(), "layer")
                  << " \xC2\xB7 " << human_bytes(bytes) << (failed ? " \xC2\xB7 " + std::to_string(failed) + " failed" : "") << "  "
                  << escape_for_display(first.media_type, 80) << "\n";
        std::vector<std::vector<std::string>> rows = {{"  NAME", "DIGEST", "SIZE", "FROM", "BLOB"}};
        if (verify) rows[0].push_back("VERIFY");
        for (size_t i : group) {
            const ManifestLayer& l = all[i]->layer;
            std::vector<std::string> row = {"  " + (l.name ? escape_for_display(*l.name, 80) : std::string("-")),
                                            escape_for_display(short_digest(l.digest), 40), human_bytes(l.size),
                                            l.from ? escape_for_display(*l.from, 60) : "-", blob_status(*all[i], registry)};
            if (verify) row.push_back(verified[i]);
            rows.push_back(std::move(row));
        }
        print_table(rows);
    }
}

std::string stored_text(const Model& m, const TensorInfo& t) {
    std::string s = t.type.name + " " + shape_text(t.ne, ShapeStyle::bracketed, shape_order(m.format));
    if (t.quant) {
        if (t.quant->scale) s += " + scale";
        if (t.quant->bias) s += " + bias";
        if (t.quant->global_scale) s += " + global_scale";
    }
    return s;
}

// The failed layer whose blob a tensor was read from, if any.
const FailedTensorLayer* failed_blob_of(const Model& m, const TensorInfo& t, const std::vector<FailedTensorLayer>& failed) {
    return t.file < m.files.size() ? failed_layer_of(failed, m.files[t.file].path) : nullptr;
}

// Every tensor: those read, with the ones from a damaged blob marked, then one row per tensor
// layer that could not be read at all.
void print_tensors(const Model& m, const std::vector<FailedTensorLayer>& failed) {
    std::vector<std::vector<std::string>> rows = {{"TENSOR", "TYPE", shape_header("SHAPE", shape_order(m.format)), "STORED", "STATUS"}};
    std::vector<bool> shown_layer(failed.size(), false);
    for (const LogicalTensor& lt : logical_tensors(m)) {
        const TensorInfo& t = m.tensors[lt.index];
        const FailedTensorLayer* f = failed_blob_of(m, t, failed);
        if (f) shown_layer[static_cast<size_t>(f - failed.data())] = true;
        rows.push_back({escape_for_display(t.name, 100), escape_for_display(lt.type, 60),
                        shape_text(lt.ne, ShapeStyle::bracketed, shape_order(m.format)), stored_text(m, t),
                        f ? std::string(code_name(f->reason.code)) : "ok"});
    }
    for (size_t i = 0; i < failed.size(); ++i)
        if (!shown_layer[i])
            rows.push_back({escape_for_display(failed[i].name, 100), "-", "-", "not read (" + failed[i].field + ")",
                            std::string(code_name(failed[i].reason.code))});
    print_table(rows);
    if (m.groups.empty()) return;
    std::cout << "\n";
    std::vector<std::vector<std::string>> groups = {{"GROUP", "EXPERTS", "PARTS", "MEMBERS", "LAYOUT"}};
    for (const TensorGroup& g : m.groups) {
        std::string parts;
        for (const std::string& p : g.parts) parts += (parts.empty() ? "" : ",") + escape_for_display(p, 40);
        groups.push_back(
            {escape_for_display(g.name, 100), std::to_string(g.count), "{" + parts + "}", std::to_string(g.members.size()), g.layout});
    }
    print_table(groups);
}

nlohmann::json tensors_json(const Model& m, const std::vector<FailedTensorLayer>& failed) {
    nlohmann::json ts = nlohmann::json::array();
    for (const TensorInfo& t : m.tensors) {
        nlohmann::json j = tensor_to_json(t, m.format);
        j["blob_error"] = nullptr;
        if (const FailedTensorLayer* f = failed_blob_of(m, t, failed)) j["blob_error"] = std::string(code_name(f->reason.code));
        ts.push_back(std::move(j));
    }
    nlohmann::json gs = nlohmann::json::array();
    for (const TensorGroup& g : m.groups) gs.push_back(group_to_json(g));
    nlohmann::json unread = nlohmann::json::array();
    for (const FailedTensorLayer& f : failed)
        unread.push_back({{"name", escape_for_display(f.name, 200)},
                          {"layer", f.field},
                          {"code", std::string(code_name(f.reason.code))},
                          {"message", escape_for_display(f.reason.message, 400)}});
    return {{"tensors", ts}, {"groups", gs}, {"failed_tensor_layers", unread}};
}

nlohmann::json layer_json(const LayerView& lv, const std::string& verified) {
    const ManifestLayer& l = lv.layer;
    nlohmann::json j = {{"kind", layer_kind_name(l.kind)},
                        {"mediaType", escape_for_display(l.media_type, 200)},
                        {"digest", escape_for_display(l.digest, 200)},
                        {"size", l.size}};
    if (l.from) j["from"] = escape_for_display(*l.from, 200);
    if (l.name) j["name"] = escape_for_display(*l.name, 200);
    if (lv.blob && lv.blob->found()) j["blob"] = lv.blob->name;
    if (lv.blob && !lv.blob->found()) j["blob_error"] = std::string(code_name(lv.blob->error->code));
    if (!verified.empty()) j["verified"] = verified;
    if (lv.text) {
        j["text"] = readable_text(lv.text->text, kJsonTextChars);
        j["text_truncated"] = lv.text->truncated() || lv.text->text.size() > kJsonTextChars;
    }
    return j;
}

// For a model the store does not hold: the tags it holds of that model, else the nearest model.
void report_models_like(const Store& store, const ModelName& name) {
    std::vector<std::string> tags, models;
    for (const ManifestRef& ref : store.scan().manifests) {
        const ModelName& n = ref.name;
        if (n.host == name.host && n.name_space == name.name_space && n.model == name.model) tags.push_back(n.tag);
        models.push_back(n.display());
    }
    if (!tags.empty()) {
        std::cerr << "tags of " << escape_for_display(name.model) << " in " << escape_for_display(store.root()) << ":";
        for (const std::string& t : tags) std::cerr << " " << escape_for_display(t);
        std::cerr << "\n";
        return;
    }
    if (auto near = nearest_name(name.display(), models))
        std::cerr << "did you mean " << escape_for_display(*near) << "? (mlens store " << escape_for_display(store.root())
                  << " lists the models)\n";
}

nlohmann::json summary_json(const StoreModelSummary& s) {
    auto text = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(escape_for_display(v, 200)); };
    nlohmann::json caps = nlohmann::json::array();
    for (const std::string& c : s.capabilities) caps.push_back(escape_for_display(c, 100));
    return {{"format", text(s.format)},
            {"family", text(s.family)},
            {"parameters", s.parameters ? nlohmann::json(*s.parameters) : nlohmann::json(nullptr)},
            {"parameter_size", text(s.parameter_size)},
            {"quantization", text(s.quantization)},
            {"context_length", s.context_length ? nlohmann::json(*s.context_length) : nlohmann::json(nullptr)},
            {"capabilities", caps}};
}

// The first line of a text layer, for the summary, cut to 100 characters ("" when there is none).
std::string head_line(LayerKind kind, const std::string& text) {
    TextHead head = first_lines(readable_layer_text(kind, text, kTextChars), 1);
    std::string line = readable_text(head.text, 100);  // already readable: this only cuts it
    return head.more_lines && !line.ends_with("\xE2\x80\xA6") ? line + " \xE2\x80\xA6" : line;
}

// The summary `ollama show` leads with, then where the manifest is and the verdict.
void print_summary(const ModelName& name, const StoredManifest& sm, const StoreModelSummary& sum, const Manifest& m,
                   const ModelCheck& check) {
    std::string caps;
    for (const std::string& c : sum.capabilities) caps += (caps.empty() ? "" : ", ") + escape_for_display(c, 40);
    std::vector<std::vector<std::string>> rows = {
        {"model", name.display() + "  (" + name.full() + ")"},
        {"format", sum.format.empty() ? "-" : escape_for_display(sum.format, 40)},  // the config's model_format
        {"family", sum.family.empty() ? "-" : escape_for_display(sum.family, 60)},
        {"parameters", sum.parameters || !sum.parameter_size.empty() ? escape_for_display(parameters_text(sum), 60) : "-"},
        {"quantization", sum.quantization.empty() ? "-" : escape_for_display(sum.quantization, 60)},
        {"context length", sum.context_length ? std::to_string(*sum.context_length) : "-"},
        {"capabilities", caps.empty() ? "-" : caps},
        {"size",
         m.total_size() ? human_bytes(*m.total_size()) + " (" + std::to_string(*m.total_size()) + " bytes, all layers)" : "unknown"}};
    if (!sum.template_text.empty()) rows.push_back({"template", head_line(LayerKind::template_text, sum.template_text)});
    if (!sum.system_text.empty()) rows.push_back({"system", head_line(LayerKind::system, sum.system_text)});
    for (const std::string& license : sum.licenses) rows.push_back({"license", head_line(LayerKind::license, license)});
    rows.push_back(
        {"manifest",
         sm.ref.path + "  " + escape_for_display(short_digest(sm.digest), 40) + "  " + std::to_string(sm.ref.file_size) + " bytes"});
    rows.push_back({"modified", sm.ref.modified ? utc_time_text(sm.ref.modified) : std::string("-")});
    rows.push_back({"status",
                    check.errors ? "rejected: " + check.short_reason()
                                 : check.reason_text() + (check.digests_verified ? ", digests verified" : ", digests not verified")});
    print_table(rows, 0);
}

// A text layer as readable text, indented, cut after `lines` lines.
void print_text_layer(const LayerView& lv) {
    const size_t lines = lv.layer.kind == LayerKind::license ? kLicenseLines : kTextLines;
    TextHead head = first_lines(readable_layer_text(lv.layer.kind, lv.text->text, kTextChars), lines);
    std::cout << "\n" << layer_kind_name(lv.layer.kind) << " (" << lv.text->size << " bytes)\n";
    size_t at = 0;
    while (at <= head.text.size()) {
        size_t end = head.text.find('\n', at);
        if (end == std::string::npos) end = head.text.size();
        std::cout << "  " << head.text.substr(at, end - at) << "\n";
        at = end + 1;
    }
    if (head.more_lines)
        std::cout << "  \xE2\x80\xA6 " << plural(head.more_lines, "more line")
                  << " (--json holds the text)\n";
    else if (lv.text->truncated())
        std::cout << "  \xE2\x80\xA6 " << lv.text->size - lv.text->text.size() << " more bytes not read\n";
}

// The last line: one verdict on the model, with what the digest pass found when it ran.
void print_verdict(const ModelCheck& check, const std::vector<const LayerView*>& layers, bool broken) {
    size_t blobs = 0, mismatched = 0;
    uint64_t bytes = 0;
    for (const LayerView* lv : layers) {
        if (!lv->blob || !lv->blob->found()) continue;
        ++blobs;
        bytes += lv->blob->size;
        auto it = check.failed_layers.find(lv->layer.field);
        mismatched += it != check.failed_layers.end() && it->second.code == ErrorCode::E_DIGEST_MISMATCH;
    }
    std::cout << "\nverdict: ";
    if (broken) {
        std::cout << "rejected";
        if (mismatched)
            std::cout << ", " << mismatched << " of " << plural(blobs, "blob") << " do not match their digests";
        // Where, not the whole message: the diagnostics on stderr carry it.
        std::cout << ": " << (check.errors ? check.short_reason() : std::string("the model's tensors could not be read")) << "\n";
        return;
    }
    std::cout << (check.warnings ? check.reason_text() : std::string("ok"));
    if (check.digests_verified)
        std::cout << ", " << plural(blobs, "blob matches its digest", "blobs match their digests") << " (" << human_bytes(bytes)
                  << " hashed)\n";
    else
        std::cout << ", digests not verified (mlens verify hashes them)\n";
}

// One model's manifest, as show prints it for a store's model and for a registry's.
struct ShownManifest {
    ModelName name;
    const ManifestView* view = nullptr;
    ModelCheck check;
    std::optional<Result<Model>> opened;  // the model read (a GGUF's header for the summary, or --tensors)
    const Store* store = nullptr;  // null for a registry's model: blobs are no files, nothing to export
};

int print_shown_manifest(const ShownManifest& shown, const StoreShowOptions& options) {
    const ModelName& name = shown.name;
    const ManifestView* view = shown.view;
    const ModelCheck& check = shown.check;
    const bool registry = shown.store == nullptr;
    const StoredManifest& sm = view->stored;
    const Manifest& m = sm.manifest;
    const std::vector<FailedTensorLayer> failed = failed_tensor_layers(m, check);
    std::vector<std::string> verified;
    std::vector<const LayerView*> all;
    if (m.has_config) all.push_back(&view->config_layer);
    for (const LayerView& lv : view->layers) all.push_back(&lv);
    for (const LayerView* lv : all) verified.push_back(options.verify ? verify_text(*lv, check) : "");
    const std::optional<Result<Model>>& opened = shown.opened;
    const StoreModelSummary summary = summarize_store_model(*view, opened && *opened ? &**opened : nullptr);
    const Result<Model>* model = options.tensors ? &*opened : nullptr;

    bool broken = check.verdict() == Verdict::errors;
    if (model && !*model) broken = true;
    // Reading the tensors can fail where the check did not (a file changed meanwhile, descriptors
    // ran out): such errors count too.
    if (model && *model && (*model)->error_count() && !check.errors) broken = true;

    if (options.json) {
        nlohmann::json layers = nlohmann::json::array();
        for (size_t i = m.has_config ? 1 : 0; i < all.size(); ++i) layers.push_back(layer_json(*all[i], verified[i]));
        nlohmann::json config = view->config ? config_json(*view->config) : nlohmann::json(nullptr);
        nlohmann::json out = {{"name", name.display()},
                              {"full_name", name.full()},
                              {"manifest", sm.ref.path},
                              {"manifest_digest", sm.digest},
                              {"manifest_bytes", sm.ref.file_size},
                              {"modified", registry ? nlohmann::json(nullptr) : nlohmann::json(sm.ref.modified)},
                              {"schemaVersion", m.schema_version},
                              {"mediaType", escape_for_display(m.media_type, 200)},
                              {"format", view->format},
                              {"size", m.total_size() ? nlohmann::json(*m.total_size()) : nlohmann::json(nullptr)},
                              {"summary", summary_json(summary)},
                              {"config_layer", m.has_config ? layer_json(*all[0], verified[0]) : nlohmann::json(nullptr)},
                              {"config", config},
                              {"layers", layers},
                              {"ok", !broken},
                              {"verdict", verdict_name(check.verdict())},
                              {"reason", check.reason_text()},
                              {"digests_verified", check.digests_verified}};
        nlohmann::json diags = nlohmann::json::array();
        for (const Diagnostic& d : check.reasons) diags.push_back(diagnostic_to_json(d));
        if (model && *model && !check.errors)
            for (const Diagnostic& d : (*model)->diagnostics)
                if (d.severity == Severity::error) diags.push_back(diagnostic_to_json(d));
        out["diagnostics"] = diags;
        if (model && *model) out.update(tensors_json(**model, failed));
        if (model && !*model) out["tensors_error"] = (*model).error().to_string();
        out["export"] = broken || registry ? nlohmann::json::array() : export_plans_json(*shown.store, name);
        print_json_result(out);
        return broken ? kExitBroken : kExitOk;
    }

    for (const Diagnostic& d : check.reasons) std::cerr << d.to_line() << "\n";
    print_summary(name, sm, summary, m, check);
    if (view->config) {
        std::cout << "\nconfig\n";
        std::vector<std::vector<std::string>> rows;
        for (const ConfigField& f : config_fields(*view->config)) rows.push_back({"  " + f.label, escape_for_display(f.value, 120)});
        print_table(rows, 0);
    }
    print_layer_groups(all, verified, options.verify, check, registry);
    for (const LayerView& lv : view->layers)
        if (lv.text) print_text_layer(lv);
    if (!broken && !registry) print_export_plans(*shown.store, name);
    if (model && *model) {
        std::cout << "\n";
        if (!check.errors)
            for (const Diagnostic& d : (*model)->diagnostics) std::cerr << d.to_line() << "\n";
        print_tensors(**model, failed);
    } else if (model) {
        std::cerr << "error: " << escape_for_display(name.display()) << ": " << escape_for_display((*model).error().to_string(), 2000)
                  << "\n";
    }
    print_verdict(check, all, broken);
    return broken ? kExitBroken : kExitOk;
}

// The check of a registry's model: the manifest's warnings, then the findings of its config and
// text layers (view_findings) and what opening the model found (its blobs' sizes, their headers),
// each reason at the layer its field names. A model that opened carries the view's findings
// among its own (open_fetched_registry_model); without one they come from the view.
ModelCheck registry_check(const ModelName& name, const ManifestView& view, const std::optional<Result<Model>>& opened) {
    ModelCheck check;
    check.name = name;
    check.manifest_path = view.stored.ref.path;
    auto add = [&](Diagnostic d) {
        ++(d.severity == Severity::error ? check.errors : check.warnings);
        const std::string layer = d.field.substr(0, d.field.find_first_of(". "));
        const bool of_layer = layer == "config" || layer.starts_with("layers[");
        if (d.severity == Severity::error && of_layer && !check.failed_layers.count(layer)) check.failed_layers.emplace(layer, d);
        check.reason_layers.push_back(of_layer ? layer : "");
        check.reasons.push_back(std::move(d));
    };
    for (const Diagnostic& d : view.stored.manifest.diagnostics) add(d);
    if (opened && *opened) {
        for (const Diagnostic& d : (*opened)->diagnostics)
            if (d.format == "store") add(d);
        return check;
    }
    for (Diagnostic& d : view_findings(view)) add(std::move(d));
    if (opened) add({Severity::error, "store", opened->error().code, opened->error().field, opened->error().offset, opened->error().message});
    return check;
}

}  // namespace

int print_store_manifest(const Store& store, const ModelName& name, const StoreShowOptions& options) {
    auto view = view_manifest(store, name);
    if (!view) {
        fail(store.root() + "/" + name.display(), view.error());
        if (!store.read_manifest(name).present()) report_models_like(store, name);
        return kExitBroken;
    }
    // The verdict and its reasons come from the store check, as for the model list and `check`.
    std::shared_ptr<CacheDatabase> cache = command_cache(options.no_cache);
    StoreCheckOptions check_options = options.verify ? full_check(cache.get()) : kStructureCheck;
    check_options.cache = cache.get();
    ShownManifest shown{name, &*view, check_store_model(store, name, check_options), std::nullopt, &store};
    // Without --tensors only a GGUF model is read for the summary, its one blob's header (the
    // parameters, the capabilities Ollama reads there); a tensor-blob model's blobs, one per
    // tensor, are read with --tensors, which lists them and counts their own errors. Without them
    // the summary's parameters are the config's.
    if (options.tensors || view->format == "gguf") shown.opened = open_store_model(store, name);
    return print_shown_manifest(shown, options);
}

int print_registry_manifest(const std::string& text, const StoreShowOptions& options) {
    auto reference = parse_registry_reference(std::string_view(text).substr(std::string_view("ollama://").size()));
    if (!reference) return fail(text, reference.error());
    auto registry = fetch_registry_manifest(*reference);
    if (!registry) return fail(text, registry.error());
    const ManifestView view = view_registry_model(*reference, *registry);
    // As for a store's model: a GGUF model's header is read for the summary, a tensor-blob model's
    // blobs only with --tensors. The model opens from the manifest and view fetched above, as
    // every command opens it; after the registry failed the view's fetches, it is not opened
    // (its blobs are not asked for) and the view's errors are the reasons.
    std::optional<Result<Model>> opened;
    if ((options.tensors || view.format == "gguf") && !view_transport_failure(view)) opened = open_fetched_registry_model(*reference, *registry, view);
    ShownManifest shown{reference->name, &view, registry_check(reference->name, view, opened), std::move(opened), nullptr};
    return print_shown_manifest(shown, options);
}

}  // namespace mlens::cli
