#include "detectors.h"

#include <functional>
#include <utility>
#include <vector>

namespace mlens::compat {

namespace {

// Markers tried in order; the first that holds decides.
class Markers {
public:
    explicit Markers(const PlanState& s) : m_s(s) {}
    Markers& kv(const std::string& key) { return add("KV " + key, [this, key] { return m_s.has_kv(key); }); }
    Markers& prefix(const std::string& p) { return add("tensor prefix " + p, [this, p] { return m_s.any_tensor_prefix(p); }); }
    Markers& tensor(const std::string& t) { return add("tensor " + t, [this, t] { return m_s.tensor(t).has_value(); }); }
    Markers& add(std::string what, std::function<bool()> test) {
        m_markers.emplace_back(std::move(what), std::move(test));
        return *this;
    }
    Detection any() const {
        std::string tried;
        for (const auto& [what, test] : m_markers) {
            if (test()) return {true, "marker: " + what};
            tried += (tried.empty() ? "" : ", ") + what;
        }
        return {false, "no marker among: " + tried};
    }

private:
    const PlanState& m_s;
    std::vector<std::pair<std::string, std::function<bool()>>> m_markers;
};

Detection wrong_arch(const std::string& arch, const std::string& expected) {
    return {false, "architecture is \"" + arch + "\", not " + expected};
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A token id read as UINT32 or non-negative INT32.
std::optional<uint32_t> token_id(const PlanState& s, const std::string& key) {
    const Value* v = s.kv(key);
    if (!v) return std::nullopt;
    if (v->type == ValueType::u32) return static_cast<uint32_t>(v->scalar.bits);
    if (v->type == ValueType::i32 && v->scalar.as_int() >= 0) return static_cast<uint32_t>(v->scalar.as_int());
    return std::nullopt;
}

std::string token_at(const PlanState& s, uint64_t i) {
    const Value* v = s.kv("tokenizer.ggml.tokens");
    if (!v || array_element_type(*v) != ValueType::string || i >= array_count(*v)) return {};
    return v->array->string_at(i, 64);
}

Detection qwen35_like(const PlanState& s, const std::string& p, bool with_ffn) {
    Markers m(s);
    m.kv(p + ".vision.block_count").kv(p + ".image_token_id").kv(p + ".ssm.v_head_reordered");
    if (with_ffn) m.kv(p + ".feed_forward_length");
    m.kv(p + ".rope.mrope_interleaved").prefix("mtp.").prefix("v.");
    return m.any();
}

}  // namespace

Detection detect_by_arch_name(const std::string& arch, const std::string& expected) {
    if (arch != expected) return wrong_arch(arch, expected);
    return {true, "marker: architecture name " + expected + " (Ollama-only)"};
}

Detection detect_embeddinggemma(const PlanState& s, const std::string& arch) {
    if (arch != "gemma3") return wrong_arch(arch, "gemma3");
    if (s.tensor("dense.0.weight")) return {true, "marker: tensor dense.0.weight"};
    return {false, "no tensor dense.0.weight"};
}

Detection detect_gemma3(const PlanState& s, const std::string& arch) {
    if (arch != "gemma3") return wrong_arch(arch, "gemma3");
    return Markers(s)
        .kv("gemma3.mm.tokens_per_image").prefix("v.").prefix("mm.")
        .kv("gemma3.rope.global.freq_base").kv("gemma3.rope.local.freq_base")
        .kv("tokenizer.ggml.add_padding_token").kv("tokenizer.ggml.add_unknown_token")
        .add("KV gemma3.attention.layer_norm_rms_epsilon missing",
             [&s] { return !s.has_kv("gemma3.attention.layer_norm_rms_epsilon"); })
        .any();
}

Detection detect_snowflake(const PlanState& s, const std::string& arch) {
    if (arch != "bert") return wrong_arch(arch, "bert");
    if (s.get_str("tokenizer.ggml.model") != "t5") return {false, "tokenizer.ggml.model is not \"t5\""};
    const Value* cm = s.kv("tokenizer.ggml.precompiled_charsmap");
    if (!cm || array_element_type(*cm) != ValueType::string)
        return {false, "tokenizer.ggml.precompiled_charsmap is not a STRING array"};
    return {true, "marker: tokenizer.ggml.precompiled_charsmap is a STRING array"};
}

Detection detect_gemma3n(const PlanState& s, const std::string& arch) {
    if (arch != "gemma3n") return wrong_arch(arch, "gemma3n");
    auto te = s.tensor("token_embd.weight");
    auto pl = s.tensor("per_layer_token_embd.weight");
    if (!te || !pl) return {false, "token_embd.weight or per_layer_token_embd.weight missing"};
    uint64_t a = s.slot(*te).ne.size() > 1 ? s.slot(*te).ne[1] : 1;
    uint64_t b = s.slot(*pl).ne.size() > 1 ? s.slot(*pl).ne[1] : 1;
    if (a == b) return {false, "token_embd and per_layer_token_embd have the same rows (" + std::to_string(a) + ")"};
    return {true, "marker: token_embd rows " + std::to_string(a) + " ≠ per_layer_token_embd rows " + std::to_string(b)};
}

Detection detect_gemma4(const PlanState& s, const std::string& arch) {
    if (arch != "gemma4") return wrong_arch(arch, "gemma4");
    return Markers(s)
        .prefix("a.").prefix("v.").prefix("mm.").prefix("model.vision_tower.")
        .add("tokenizer.ggml.model == \"llama\"", [&s] { return s.get_str("tokenizer.ggml.model") == "llama"; })
        .any();
}

Detection detect_qwen35moe(const PlanState& s, const std::string& arch) {
    if (arch != "qwen35moe") return wrong_arch(arch, "qwen35moe");
    return qwen35_like(s, "qwen35moe", true);
}

Detection detect_qwen35(const PlanState& s, const std::string& arch) {
    if (arch != "qwen35") return wrong_arch(arch, "qwen35");
    return qwen35_like(s, "qwen35", false);
}

Detection detect_qwen3next(const PlanState& s, const std::string& arch) {
    if (arch != "qwen3next") return wrong_arch(arch, "qwen3next");
    for (size_t i = 0; i < s.slot_count(); ++i)
        if (ends_with(s.slot(i).name, ".ssm_dt")) return {true, "marker: tensor " + s.slot(i).name + " ends .ssm_dt"};
    return {false, "no tensor name ends .ssm_dt"};
}

Detection detect_laguna(const PlanState& s, const std::string& arch) {
    if (arch != "laguna") return wrong_arch(arch, "laguna");
    return Markers(s).kv("laguna.rope.swa.dimension_count").kv("laguna.rope.swa.freq_base").tensor("blk.0.attn_g.weight").any();
}

Detection detect_lfm2(const PlanState& s, const std::string& arch) {
    if (arch != "lfm2") return wrong_arch(arch, "lfm2");
    if (!s.tensor("output_norm.weight")) return {false, "no tensor output_norm.weight"};
    if (s.tensor("token_embd_norm.weight")) return {false, "tensor token_embd_norm.weight already present"};
    return {true, "marker: output_norm.weight without token_embd_norm.weight"};
}

Detection detect_mistral3(const PlanState& s, const std::string& arch) {
    if (arch != "mistral3") return wrong_arch(arch, "mistral3");
    return Markers(s)
        .prefix("v.").prefix("mm.").kv("mistral3.rope.scaling.beta_fast")
        .kv("mistral3.rope.scaling.mscale_all_dim").kv("mistral3.rope.scaling_beta")
        .any();
}

Detection detect_qwen3vl(const PlanState& s, const std::string& arch) {
    if (arch != "qwen3vl" && arch != "qwen3vlmoe") return wrong_arch(arch, "qwen3vl or qwen3vlmoe");
    if (s.has_kv(arch + ".rope.dimension_sections")) return {false, arch + ".rope.dimension_sections present"};
    return {true, "marker: " + arch + ".rope.dimension_sections missing"};
}

Detection detect_nemotron_h_omni(const PlanState& s, const std::string& arch) {
    if (arch != "nemotron_h_omni") return wrong_arch(arch, "nemotron_h_omni");
    return Markers(s).prefix("v.").prefix("a.").prefix("mm.").any();
}

Detection detect_nemotron_h_moe(const PlanState& s, const std::string& arch) {
    if (arch != "nemotron_h_moe") return wrong_arch(arch, "nemotron_h_moe");
    return Markers(s).prefix("blk.1.ffn_latent_in").prefix("blk.0.ffn_latent_in").prefix("mtp.").any();
}

Detection detect_llama3(const PlanState& s, const std::string& arch) {
    if (arch != "llama") return wrong_arch(arch, "llama");
    if (token_at(s, 128009) != "<|eot_id|>") return {false, "token 128009 is not <|eot_id|>"};
    std::string tmpl = s.get_str("tokenizer.chat_template").value_or("");
    bool header = token_at(s, 128006) == "<|start_header_id|>" || tmpl.find("<|start_header_id|>") != std::string::npos ||
                  tmpl.find("<|eot_id|>") != std::string::npos;
    if (!header) return {false, "neither token 128006 nor the chat template shows the Llama-3 header tokens"};
    auto pre = s.get_str("tokenizer.ggml.pre");
    if (!pre || pre->empty() || *pre == "default") return {true, "marker: Llama-3 vocab with tokenizer.ggml.pre missing or default"};
    if (token_id(s, "tokenizer.ggml.eos_token_id") == 128001u) return {true, "marker: Llama-3 vocab with eos_token_id 128001"};
    return {false, "Llama-3 vocab, but tokenizer.ggml.pre is set and eos_token_id is not 128001"};
}

Detection detect_llama4(const PlanState& s, const std::string& arch) {
    if (arch != "llama4") return wrong_arch(arch, "llama4");
    return Markers(s).prefix("v.").prefix("mm.").any();
}

}  // namespace mlens::compat
