// Small text-side handlers: renamed architectures (gptoss, olmo3) and metadata fixes (snowflake,
// laguna, lfm2, mistral3, Llama-3, llama4), plus the helpers shared by all text rules.
#include "text_rules.h"

#include <string>
#include <vector>

namespace mlens::compat {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int base64_digit(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Standard base64, stopping at '='; nullopt on any other character outside the alphabet.
std::optional<std::vector<uint8_t>> decode_base64(const std::string& text) {
    std::vector<uint8_t> out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        if (c == '=') break;
        int d = base64_digit(c);
        if (d < 0) return std::nullopt;
        acc = (acc << 6) | static_cast<uint32_t>(d);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
        }
    }
    return out;
}

std::optional<uint32_t> token_id(const PlanState& s, const std::string& key) {
    const Value* v = s.kv(key);
    if (!v) return std::nullopt;
    if (v->type == ValueType::u32) return static_cast<uint32_t>(v->scalar.bits);
    if (v->type == ValueType::i32 && v->scalar.as_int() >= 0) return static_cast<uint32_t>(v->scalar.as_int());
    return std::nullopt;
}

bool pre_is_default(const PlanState& s) {
    auto pre = s.get_str("tokenizer.ggml.pre");
    return !pre || pre->empty() || *pre == "default";
}

}  // namespace

uint64_t dim(const PlanState& s, size_t slot, size_t i) {
    const auto& ne = s.slot(slot).ne;
    return i < ne.size() ? ne[i] : 1;
}

void switch_arch(PlanState& s, std::string& arch, const std::string& to) {
    s.set_str("general.architecture", to, "loader architecture " + arch + " → " + to);
    arch = to;
    s.set_arch(to);
}

void rename_ssm_dt_bias(PlanState& s) {
    for (size_t i = 0; i < s.slot_count(); ++i)
        if (ends_with(s.slot(i).name, ".ssm_dt")) s.rename_slot(i, s.slot(i).name + ".bias");
}

void pad_sections(PlanState& s, const std::string& from, const std::string& key, bool at_least) {
    const Value* v = s.kv(from);
    if (!v || !v->is_array()) return;
    uint64_t n = array_count(*v);
    if (at_least ? n < 3 : n != 3) return;
    auto elems = array_scalars(*v);
    if (!elems) return;
    std::vector<int32_t> padded;
    for (size_t i = 0; i < 3; ++i) padded.push_back(static_cast<int32_t>((*elems)[i].bits));
    padded.push_back(0);
    s.set(key, array_i32(padded), "M-RoPE sections padded to 4 with a trailing 0");
}

void handle_snowflake_arctic_embed2(PlanState& s, std::string&) {
    const std::string key = "tokenizer.ggml.precompiled_charsmap";
    auto entries = array_strings_of(*s.kv(key));
    if (!entries) {
        s.issue("cannot read " + key);
        return;
    }
    std::string encoded;
    for (size_t i = 0; i < entries->size(); ++i) {
        if ((*entries)[i].size() != 1) {
            s.issue(key + " entry " + std::to_string(i) + " is not exactly one character: the shim aborts the fix");
            return;
        }
        encoded += (*entries)[i];
    }
    auto decoded = decode_base64(encoded);
    if (!decoded || decoded->empty()) {
        s.issue(key + " is not valid base64: the shim leaves it unchanged");
        return;
    }
    s.set(key, array_u8(*decoded), "base64 string array decoded to " + std::to_string(decoded->size()) + " bytes");
}

void handle_laguna(PlanState& s, std::string&) {
    s.copy_u32("laguna.rope.swa.dimension_count", "laguna.rope.dimension_count_swa");
    s.copy_f32("laguna.rope.swa.freq_base", "laguna.rope.freq_base_swa");
    for (size_t i = 0; i < s.slot_count(); ++i) {
        const std::string& name = s.slot(i).name;
        if (ends_with(name, ".attn_g.weight"))
            s.rename_slot(i, name.substr(0, name.size() - 14) + ".attn_gate.weight");
    }
}

void handle_gptoss(PlanState& s, std::string& arch) {
    switch_arch(s, arch, "gpt-oss");
    s.rename_kv_prefix("gptoss.", "gpt-oss.");
    if (auto gate = s.tensor("blk.0.ffn_gate_exps.weight"))
        s.inject_u32("gpt-oss.expert_feed_forward_length", static_cast<uint32_t>(dim(s, *gate, 1)),
                 "blk.0.ffn_gate_exps.weight ne[1]");
    s.inject_str("gpt-oss.rope.scaling.type", "yarn");
    s.set_str("tokenizer.ggml.pre", "gpt-4o");
    s.rename_tensors_containing(".attn_out", ".attn_output");
    s.rename_tensors_containing(".attn_sinks", ".attn_sinks.weight");
    s.rename_tensors_containing(".ffn_norm", ".post_attention_norm");
}

void handle_lfm2(PlanState& s, std::string&) {
    s.rename_tensor("output_norm.weight", "token_embd_norm.weight");
    s.set_str("tokenizer.ggml.pre", "lfm2");
    if (auto gate = s.tensor("blk.0.ffn_gate.weight")) {
        const auto ff = static_cast<uint32_t>(dim(s, *gate, 1));
        if (s.get_u32("lfm2.feed_forward_length") != ff)
            s.set_u32("lfm2.feed_forward_length", ff, "blk.0.ffn_gate.weight ne[1]");
    }
}

void handle_olmo3(PlanState& s, std::string& arch) {
    switch_arch(s, arch, "olmo2");
    s.rename_kv_prefix("olmo3.", "olmo2.");
}

void handle_mistral3(PlanState& s, std::string&) {
    s.copy_kv("mistral3.rope.scaling.beta_fast", "mistral3.rope.scaling.yarn_beta_fast");
    s.copy_kv("mistral3.rope.scaling.beta_slow", "mistral3.rope.scaling.yarn_beta_slow");
    s.copy_kv("mistral3.rope.scaling.mscale_all_dim", "mistral3.rope.scaling.yarn_log_multiplier");
    s.copy_kv("mistral3.rope.scaling_beta", "mistral3.attention.temperature_scale");
    if (pre_is_default(s)) s.set_str("tokenizer.ggml.pre", "tekken", "pre was missing, empty or default");
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
}

void handle_llama3_metadata(PlanState& s, std::string&) {
    if (pre_is_default(s)) s.set_str("tokenizer.ggml.pre", "llama-bpe", "pre was missing or default");
    auto eos = token_id(s, "tokenizer.ggml.eos_token_id");
    if (!s.has_kv("tokenizer.ggml.eos_token_id") || eos == 128001u)
        s.set_u32("tokenizer.ggml.eos_token_id", 128009, "<|eot_id|> ends a Llama-3 chat turn");
    auto eot = token_id(s, "tokenizer.ggml.eot_token_id");
    if (!s.has_kv("tokenizer.ggml.eot_token_id") || eot == 128001u)
        s.set_u32("tokenizer.ggml.eot_token_id", 128009);
    s.set("tokenizer.ggml.eos_token_ids", array_i32({128009}));
}

void handle_llama4(PlanState& s, std::string&) {
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
}

}  // namespace mlens::compat
