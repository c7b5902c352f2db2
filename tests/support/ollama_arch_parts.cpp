#include "ollama_arch_parts.h"

namespace mlens::test::ollama_parts {

OllamaGguf& tiny_vocabulary(OllamaGguf& g, int extra) {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    static const char* kHex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
        types.push_back(6);
    }
    for (const char* w : {"\u2581the", "\u2581model", "\u2581file", "\u2581loads", "\u2581here"}) {
        tokens.push_back(w);
        types.push_back(1);
    }
    for (int i = 0; i < extra; ++i) {
        tokens.push_back("<extra_" + std::to_string(i) + ">");
        types.push_back(4);
    }
    std::vector<float> scores(tokens.size(), 0.0f);
    for (size_t i = 3 + 256; i < tokens.size(); ++i) scores[i] = -static_cast<float>(i);
    return g.str("tokenizer.ggml.model", "llama")
        .kv("tokenizer.ggml.tokens", compat::array_strings(tokens))
        .kv("tokenizer.ggml.scores", compat::array_f32(scores))
        .kv("tokenizer.ggml.token_type", compat::array_i32(types))
        .u32("tokenizer.ggml.bos_token_id", 1)
        .u32("tokenizer.ggml.eos_token_id", 2)
        .u32("tokenizer.ggml.unknown_token_id", 0)
        .boolean("tokenizer.ggml.add_bos_token", true);
}

std::string blk(int i) { return "blk." + std::to_string(i) + "."; }

OllamaGguf& base_keys(OllamaGguf& g, const std::string& p, uint32_t blocks, Value kv_heads) {
    return g.u32(p + "context_length", 256)
        .u32(p + "embedding_length", kEmbd)
        .u32(p + "block_count", blocks)
        .u32(p + "feed_forward_length", kFf)
        .u32(p + "attention.head_count", kHeads)
        .kv(p + "attention.head_count_kv", std::move(kv_heads))
        .f32(p + "rope.freq_base", 10000.0f)
        .f32(p + "attention.layer_norm_rms_epsilon", 1e-6f);
}

OllamaGguf& embeddings(OllamaGguf& g, bool tied, const std::string& norm_name) {
    g.tensor("token_embd.weight", {kEmbd, kVocab}, kF16).tensor(norm_name, {kEmbd});
    if (!tied) g.tensor("output.weight", {kEmbd, kVocab}, kF16);
    return g;
}

OllamaGguf& attention(OllamaGguf& g, const std::string& b, const std::string& out, uint64_t kv) {
    return g.tensor(b + "attn_q.weight", {kEmbd, kQ}, kF16)
        .tensor(b + "attn_k.weight", {kEmbd, kv}, kF16)
        .tensor(b + "attn_v.weight", {kEmbd, kv}, kF16)
        .tensor(b + out + ".weight", {kQ, kEmbd}, kF16);
}

OllamaGguf& dense_ffn(OllamaGguf& g, const std::string& b, uint64_t ff) {
    return g.tensor(b + "ffn_gate.weight", {kEmbd, ff}, kF16)
        .tensor(b + "ffn_up.weight", {kEmbd, ff}, kF16)
        .tensor(b + "ffn_down.weight", {ff, kEmbd}, kF16);
}

OllamaGguf& expert_ffn(OllamaGguf& g, const std::string& b, uint64_t experts, uint64_t ff) {
    return g.tensor(b + "ffn_gate_inp.weight", {kEmbd, experts})
        .tensor(b + "ffn_gate_exps.weight", {kEmbd, ff, experts}, kF16)
        .tensor(b + "ffn_up_exps.weight", {kEmbd, ff, experts}, kF16)
        .tensor(b + "ffn_down_exps.weight", {ff, kEmbd, experts}, kF16);
}

OllamaGguf& shared_expert_ffn(OllamaGguf& g, const std::string& b, uint64_t ff) {
    return g.tensor(b + "ffn_gate_shexp.weight", {kEmbd, ff}, kF16)
        .tensor(b + "ffn_up_shexp.weight", {kEmbd, ff}, kF16)
        .tensor(b + "ffn_down_shexp.weight", {ff, kEmbd}, kF16);
}

OllamaGguf& vision_block(OllamaGguf& g, const std::string& out) {
    attention(g, "v.blk.0.", out, kQ);
    return dense_ffn(g, "v.blk.0.");
}

OllamaGguf& qwen_vision_keys(OllamaGguf& g, const std::string& p) {
    return g.u32(p + "vision.block_count", 1)
        .u32(p + "vision.embedding_length", kEmbd)
        .u32(p + "vision.attention.head_count", kHeads)
        .u32(p + "vision.patch_size", 16)
        .u32(p + "vision.spatial_merge_size", 2)
        .u32(p + "vision.num_channels", 3);
}

OllamaGguf& qwen_vision_tower(OllamaGguf& g, bool deepstack) {
    g.tensor("v.patch_embed.weight", {16, 16, 2, kEmbd * 3}, kF16)
        .tensor("v.patch_embed.bias", {kEmbd})
        .tensor("v.pos_embed.weight", {kEmbd, 4}, kF16)
        .tensor("v.blk.0.norm1.weight", {kEmbd})
        .tensor("v.blk.0.norm2.weight", {kEmbd})
        .tensor("v.blk.0.attn_q.bias", {kEmbd})
        .tensor("v.blk.0.attn_k.bias", {kEmbd})
        .tensor("v.blk.0.attn_v.bias", {kEmbd})
        .tensor("v.blk.0.mlp.linear_fc1.weight", {kEmbd, kFf}, kF16)
        .tensor("v.blk.0.mlp.linear_fc2.weight", {kFf, kEmbd}, kF16)
        .tensor("v.merger.norm.weight", {kEmbd})
        .tensor("v.merger.linear_fc1.weight", {kEmbd * 4, kEmbd * 4}, kF16)
        .tensor("v.merger.linear_fc2.weight", {kEmbd * 4, kEmbd}, kF16);
    attention(g, "v.blk.0.", "attn_out", kQ);
    if (!deepstack) return g;
    return g.tensor("v.deepstack_merger.0.norm.weight", {kEmbd * 4})
        .tensor("v.deepstack_merger.0.linear_fc1.weight", {kEmbd * 4, kEmbd * 4}, kF16)
        .tensor("v.deepstack_merger.0.linear_fc2.weight", {kEmbd * 4, kEmbd}, kF16);
}

}  // namespace mlens::test::ollama_parts
