#include "mlens/analysis/model_overview.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "mlens/compat/load_rewrite.h"

namespace mlens {

namespace {

// Side files beyond this are not parsed for facts.
constexpr uint64_t kMaxSideFileBytes = 4u << 20;

// A scalar integer key, or the largest element of an integer array (per-layer head counts).
std::optional<uint64_t> integer_key(const Model& model, const std::string& key) {
    const MetadataEntry* e = model.find(key);
    if (!e) return std::nullopt;
    if (value_type_is_integer(e->value.type)) return e->value.scalar.as_uint();
    if (!e->value.is_array() || !e->value.array || !value_type_is_integer(e->value.array->element_type) || e->value.array->count == 0)
        return std::nullopt;
    uint64_t largest = 0;
    for (uint64_t i = 0; i < std::min<uint64_t>(e->value.array->count, 4096); ++i)
        largest = std::max(largest, e->value.array->scalar_at(i).as_uint());
    return largest;
}

nlohmann::json side_json(const Model& model, const char* key) {
    const MetadataEntry* e = model.find(key);
    if (!e || !e->value.is_string() || e->value.string_length() > kMaxSideFileBytes) return {};
    return nlohmann::json::parse(e->value.string_value(kMaxSideFileBytes), nullptr, false);
}

std::optional<uint64_t> config_integer(const nlohmann::json& config, const char* name) {
    for (const nlohmann::json* scope : {&config, config.contains("text_config") ? &config["text_config"] : nullptr}) {
        if (!scope || !scope->is_object()) continue;
        auto it = scope->find(name);
        if (it != scope->end() && it->is_number_unsigned()) return it->get<uint64_t>();
    }
    return std::nullopt;
}

void gguf_facts(const Model& model, ModelOverview& f) {
    const std::string arch = model.get_string("general.architecture").value_or("");
    f.context_length = integer_key(model, arch + ".context_length");
    f.embedding_length = integer_key(model, arch + ".embedding_length");
    f.layers = integer_key(model, arch + ".block_count");
    f.heads = integer_key(model, arch + ".attention.head_count");
    f.kv_heads = integer_key(model, arch + ".attention.head_count_kv");
    const MetadataEntry* tokens = model.find("tokenizer.ggml.tokens");
    f.vocabulary = tokens && tokens->value.is_array() && tokens->value.array ? std::optional<uint64_t>(tokens->value.array->count)
                                                                              : integer_key(model, arch + ".vocab_size");
    f.chat_template = model.find("tokenizer.chat_template") != nullptr;
}

void config_facts(const Model& model, ModelOverview& f) {
    const nlohmann::json config = side_json(model, "file:config.json");
    if (config.is_object()) {
        f.context_length = config_integer(config, "max_position_embeddings");
        f.embedding_length = config_integer(config, "hidden_size");
        f.layers = config_integer(config, "num_hidden_layers");
        f.heads = config_integer(config, "num_attention_heads");
        f.kv_heads = config_integer(config, "num_key_value_heads");
        f.vocabulary = config_integer(config, "vocab_size");
    }
    const nlohmann::json tokenizer = side_json(model, "file:tokenizer_config.json");
    f.chat_template = (tokenizer.is_object() && tokenizer.contains("chat_template")) || model.find("file:chat_template.jinja") != nullptr;
}

std::string number_or_dash(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : "-"; }

std::string chat_template_row(const ModelOverview& f) {
    if (f.chat_template_rewrite.empty()) return f.chat_template ? "present" : "none";
    return (f.chat_template ? "present; the compat rewrite replaces it on load (" : "none in the file; the compat rewrite adds one on load (") +
        f.chat_template_rewrite + ")";
}

}  // namespace

ModelOverview model_overview(const Model& model) {
    ModelOverview f;
    if (model.format == Format::gguf)
        gguf_facts(model, f);
    else
        config_facts(model, f);
    compat::OllamaOrigin origin = compat::detect_ollama_origin(model);
    f.ollama_made = origin.ollama_made();
    f.origin_reason = f.ollama_made                 ? origin.evidence.front().marker
        : model.format == Format::gguf ? "no marker of Ollama's writer"
                                                    : "not a GGUF: Ollama's GGUF writer did not make it";
    if (const auto rewrite = compat::load_rewrite(model, std::move(origin)))
        if (const compat::KvEdit* edit = compat::key_after(model, rewrite->plan.text, "tokenizer.chat_template").edit)
            f.chat_template_rewrite = edit->rule;
    return f;
}

std::vector<std::pair<std::string, std::string>> overview_rows(const ModelOverview& f) {
    std::string heads = number_or_dash(f.heads);
    if (f.heads && f.kv_heads && *f.kv_heads != *f.heads) heads += " (" + std::to_string(*f.kv_heads) + " KV)";
    return {{"context", number_or_dash(f.context_length)},
            {"embedding", number_or_dash(f.embedding_length)},
            {"layers", number_or_dash(f.layers)},
            {"heads", heads},
            {"vocabulary", number_or_dash(f.vocabulary)},
            {"chat template", chat_template_row(f)},
            {"Ollama-made", (f.ollama_made ? "yes: " : "no: ") + f.origin_reason}};
}

}  // namespace mlens
