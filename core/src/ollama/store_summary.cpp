#include "mlens/ollama/store_summary.h"

#include <algorithm>
#include <string_view>

#include "mlens/model/summary.h"
#include "mlens/ollama/go_template.h"
#include "mlens/text/readable_text.h"

namespace mlens {

namespace {

// Ollama's built-in parsers whose tool and thinking support we know (model/parsers).
struct BuiltinParser {
    std::string_view name;
    bool tools, thinking;
};
constexpr BuiltinParser kBuiltinParsers[] = {
    {"qwen3", true, false},  {"qwen3-thinking", true, true},  {"qwen3.5", true, true},       {"ministral", true, false},
    {"harmony", true, true}, {"nemotron-3-nano", true, true}, {"passthrough", false, false},
};

const BuiltinParser* builtin_parser(const std::string& name) {
    for (const BuiltinParser& p : kBuiltinParsers)
        if (p.name == name) return &p;
    return nullptr;
}

bool has(const std::vector<std::string>& list, std::string_view item) { return std::find(list.begin(), list.end(), item) != list.end(); }

void add(std::vector<std::string>& list, std::string_view item) {
    if (!has(list, item)) list.emplace_back(item);
}

const LayerView* last_layer(const ManifestView& view, LayerKind kind) {
    const LayerView* found = nullptr;
    for (const LayerView& lv : view.layers)
        if (lv.layer.kind == kind) found = &lv;
    return found;
}

// The GGUF Ollama would read (a model layer's), when it was read.
const Model* gguf_of(const ManifestView& view, const Model* model) {
    if (!last_layer(view, LayerKind::model)) return nullptr;
    return model && model->format == Format::gguf && !model->metadata.empty() ? model : nullptr;
}

std::string architecture_key(const Model& gguf, std::string_view key) {
    return gguf.get_string("general.architecture").value_or("") + "." + std::string(key);
}

}  // namespace

std::vector<std::string> store_model_capabilities(const ManifestView& view, const Model* model) {
    const ModelConfig* config = view.config ? &*view.config : nullptr;
    if (config && has(config->capabilities.items, "image")) return {"image"};
    std::vector<std::string> caps;
    if (last_layer(view, LayerKind::model)) {
        if (const Model* gguf = gguf_of(view, model)) {
            add(caps, gguf->find(architecture_key(*gguf, "pooling_type")) ? "embedding" : "completion");
            if (gguf->find(architecture_key(*gguf, "vision.block_count"))) add(caps, "vision");
        }
    } else if (config) {
        for (const std::string& c : config->capabilities.items) add(caps, c);
    }

    const LayerView* template_layer = last_layer(view, LayerKind::template_text);
    // A template layer that could not be read leaves the template unknown, not the default.
    if (template_layer && !template_layer->text) return caps;
    const GoTemplateFacts facts =
        read_go_template(template_layer ? std::string_view(template_layer->text->text) : std::string_view("{{ .Prompt }}"));
    if (!facts.parsed) return caps;
    const BuiltinParser* parser = config ? builtin_parser(config->parser) : nullptr;
    if (has(facts.vars, "tools") || (parser && parser->tools)) add(caps, "tools");
    if (has(facts.vars, "suffix")) add(caps, "insert");
    if (last_layer(view, LayerKind::projector)) add(caps, "vision");
    if (has(caps, "thinking")) return caps;
    const std::string family = config ? config->model_family : "";
    if ((!facts.thinking_open.empty() && !facts.thinking_close.empty()) || family == "gptoss" || family == "gpt-oss" ||
        (parser && parser->thinking))
        add(caps, "thinking");
    return caps;
}

StoreModelSummary summarize_store_model(const ManifestView& view, const Model* model) {
    StoreModelSummary s;
    s.format = view.format;
    const ModelConfig* config = view.config ? &*view.config : nullptr;
    std::optional<ModelSummary> facts;
    if (model) facts = summarize(*model);
    s.family = config && !config->model_family.empty() ? config->model_family : facts ? facts->architecture : "";
    if (facts) s.parameters = facts->parameter_count();
    if (config) s.parameter_size = config->model_type;
    s.quantization = config ? config->file_type : "";
    if (s.quantization.empty() && facts && facts->file_type) s.quantization = facts->file_type_name;
    if (config && config->context_length)
        s.context_length = config->context_length;
    else if (const Model* gguf = gguf_of(view, model))
        s.context_length = gguf->get_uint(architecture_key(*gguf, "context_length"));
    s.capabilities = store_model_capabilities(view, model);
    if (const LayerView* t = last_layer(view, LayerKind::template_text); t && t->text) s.template_text = t->text->text;
    if (const LayerView* t = last_layer(view, LayerKind::system); t && t->text) s.system_text = t->text->text;
    for (const LayerView& lv : view.layers)
        if (lv.layer.kind == LayerKind::license && lv.text) s.licenses.push_back(lv.text->text);
    return s;
}

std::string parameters_text(std::optional<uint64_t> parameters, std::string_view parameter_size) {
    if (parameters) return human_count(*parameters);
    return parameter_size.empty() ? "" : std::string(parameter_size) + " (config)";
}

std::string parameters_text(const StoreModelSummary& summary) { return parameters_text(summary.parameters, summary.parameter_size); }

std::string readable_layer_text(LayerKind kind, std::string_view text, size_t max_chars) {
    if (kind == LayerKind::params || kind == LayerKind::messages) return readable_json(text, max_chars);
    return readable_text(text, max_chars);
}

}  // namespace mlens
