#include <nlohmann/json.hpp>

#include <regex>

#include "mlens/analysis/name_map.h"

namespace mlens {

namespace {

constexpr uint64_t kMaxConfigBytes = 4u << 20;

std::string gguf_arch_of(const std::string& model_type) {
    if (model_type == "mistral" || model_type == "mixtral") return "llama";
    if (model_type == "qwen2_moe") return "qwen2moe";
    if (model_type == "qwen3_moe") return "qwen3moe";
    if (model_type == "gemma3_text") return "gemma3";
    return model_type;
}

bool is_gemma(const std::string& arch) { return arch == "gemma" || arch == "gemma2" || arch == "gemma3"; }

// The layer-local part of an HF name ("self_attn.q_proj.weight") to its GGUF part.
std::optional<std::string> layer_part(const std::string& arch, const std::string& p) {
    static const std::pair<const char*, const char*> kCommon[] = {
        {"self_attn.q_proj", "attn_q"},
        {"self_attn.k_proj", "attn_k"},
        {"self_attn.v_proj", "attn_v"},
        {"self_attn.o_proj", "attn_output"},
        {"self_attn.q_norm", "attn_q_norm"},
        {"self_attn.k_norm", "attn_k_norm"},
        {"mlp.gate_proj", "ffn_gate"},
        {"mlp.up_proj", "ffn_up"},
        {"mlp.down_proj", "ffn_down"},
        {"input_layernorm", "attn_norm"},
        {"block_sparse_moe.gate", "ffn_gate_inp"},
        {"mlp.gate", "ffn_gate_inp"},
        {"mlp.shared_expert.gate_proj", "ffn_gate_shexp"},
        {"mlp.shared_expert.up_proj", "ffn_up_shexp"},
        {"mlp.shared_expert.down_proj", "ffn_down_shexp"},
        {"mlp.shared_expert_gate", "ffn_gate_inp_shexp"},
    };
    // Gemma 2/3 have four norms per layer; the others call the pre-FFN norm post_attention_layernorm.
    static const std::pair<const char*, const char*> kGemmaNorms[] = {
        {"post_attention_layernorm", "post_attention_norm"},
        {"pre_feedforward_layernorm", "ffn_norm"},
        {"post_feedforward_layernorm", "post_ffw_norm"},
    };
    const bool four_norms = arch == "gemma2" || arch == "gemma3";
    for (const auto& [hf, gguf] : kCommon)
        if (p == hf) return gguf;
    if (four_norms) {
        for (const auto& [hf, gguf] : kGemmaNorms)
            if (p == hf) return gguf;
    } else if (p == "post_attention_layernorm") {
        return "ffn_norm";
    }
    return std::nullopt;
}

const char* expert_part(const std::string& p) {
    if (p == "w1" || p == "gate_proj") return "ffn_gate_exps";
    if (p == "w2" || p == "down_proj") return "ffn_down_exps";
    if (p == "w3" || p == "up_proj") return "ffn_up_exps";
    return nullptr;
}

std::optional<NameMatch> map_name(const HfArchitecture& a, std::string name) {
    for (const char* prefix : {"model.language_model.", "language_model."})
        if (name.starts_with(prefix)) {
            name = name.substr(std::string(prefix).size());
            if (!name.starts_with("model.") && !name.starts_with("lm_head.")) name = "model." + name;
            break;
        }
    NameMatch m;
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos) return std::nullopt;
    const std::string stem = name.substr(0, dot), suffix = name.substr(dot);  // ".weight" / ".bias"
    if (stem == "model.embed_tokens")
        m.name = "token_embd";
    else if (stem == "model.norm")
        m.name = "output_norm";
    else if (stem == "lm_head")
        m.name = "output";
    if (m.name.empty()) {
        static const std::regex kLayer(R"(model\.layers\.(\d+)\.(.+))");
        static const std::regex kExpert(R"((?:block_sparse_moe|mlp)\.experts\.(\d+)\.(\w+))");
        std::smatch layer, expert;
        if (!std::regex_match(stem, layer, kLayer)) return std::nullopt;
        const std::string blk = "blk." + layer[1].str() + ".", rest = layer[2].str();
        if (std::regex_match(rest, expert, kExpert)) {
            const char* part = expert_part(expert[2].str());
            if (!part) return std::nullopt;
            m.name = blk + part;
            m.slice = std::stoull(expert[1].str());
        } else {
            auto part = layer_part(a.arch, rest);
            if (!part) return std::nullopt;
            m.name = blk + *part;
            if (a.arch == "llama" && a.n_head > 0) {
                if (rest == "self_attn.q_proj") m.rope_heads = a.n_head;
                if (rest == "self_attn.k_proj") m.rope_heads = a.n_head_kv ? a.n_head_kv : a.n_head;
            }
        }
    }
    if (is_gemma(a.arch) && suffix == ".weight" && name.ends_with("norm.weight")) m.add = 1.0f;
    m.name += suffix;
    return m;
}

std::optional<HfArchitecture> from_config(const Model& model) {
    const MetadataEntry* e = model.find("file:config.json");
    if (!e || !e->value.is_string()) return std::nullopt;
    auto config = nlohmann::json::parse(e->value.string_value(kMaxConfigBytes), nullptr, false);
    if (!config.is_object()) return std::nullopt;
    const nlohmann::json& c = config.contains("text_config") && config["text_config"].is_object() ? config["text_config"] : config;
    auto str = [&](const char* key) -> std::string {
        if (c.contains(key) && c[key].is_string()) return c[key].get<std::string>();
        if (config.contains(key) && config[key].is_string()) return config[key].get<std::string>();
        return {};
    };
    auto num = [&](const char* key) -> uint32_t { return c.contains(key) && c[key].is_number_unsigned() ? c[key].get<uint32_t>() : 0; };
    HfArchitecture a;
    a.arch = gguf_arch_of(str("model_type"));
    a.n_head = num("num_attention_heads");
    a.n_head_kv = num("num_key_value_heads");
    if (a.arch.empty()) return std::nullopt;
    return a;
}

}  // namespace

std::optional<HfArchitecture> detect_hf_architecture(const Model& model) {
    if (model.format != Format::gguf) return from_config(model);
    auto arch = model.get_string("general.architecture");
    if (!arch) return std::nullopt;
    HfArchitecture a;
    a.arch = *arch;
    a.n_head = static_cast<uint32_t>(model.get_uint(*arch + ".attention.head_count").value_or(0));
    a.n_head_kv = static_cast<uint32_t>(model.get_uint(*arch + ".attention.head_count_kv").value_or(0));
    return a;
}

NameMap hf_to_gguf_name_map(const HfArchitecture& arch) {
    return [arch](const std::string& name) { return map_name(arch, name); };
}

bool has_hf_names(const Model& model) {
    for (const TensorInfo& t : model.tensors)
        if (t.name.starts_with("model.") || t.name.starts_with("lm_head.") || t.name.starts_with("language_model.")) return true;
    return false;
}

}  // namespace mlens
