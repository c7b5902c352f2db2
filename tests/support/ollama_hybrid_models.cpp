// The recurrent hybrids among the tiny Ollama-made models (ollama_arch_models.h): the gated delta
// net of qwen3next and qwen35 / qwen35moe, and the Mamba-2 hybrid of nemotron_h_omni and
// nemotron_h_moe.
#include <functional>

#include "ollama_arch_parts.h"

namespace mlens::test::ollama_parts {

namespace {

// Ollama's names for the multi-token-prediction layer's own norms and input projection.
OllamaGguf& mtp_shared(OllamaGguf& g) {
    return g.tensor("mtp.layers.0.attn_norm.weight", {kEmbd})
        .tensor("mtp.layers.0.post_attention_norm.weight", {kEmbd})
        .tensor("mtp.fc.weight", {kEmbd * 2, kEmbd}, kF16)
        .tensor("mtp.pre_fc_norm_embedding.weight", {kEmbd})
        .tensor("mtp.pre_fc_norm_hidden.weight", {kEmbd})
        .tensor("mtp.norm.weight", {kEmbd});
}

// The keys of qwen3next and qwen35 under prefix `p`: base_keys of two blocks with head_count_kv
// per layer (0 for the delta-net block), and the gated delta net's: key heads of 8 in 2 groups,
// value heads of 8, 4 of them; the attention layers every second block.
OllamaGguf& delta_net_keys(OllamaGguf& g, const std::string& p) {
    return base_keys(g, p, 2, compat::array_u32({0, kKvHeads}))
        .u32(p + "ssm.conv_kernel", 4)
        .u32(p + "ssm.state_size", 8)
        .u32(p + "ssm.group_count", 2)
        .u32(p + "ssm.time_step_rank", 4)
        .u32(p + "ssm.inner_size", 32)
        .u32(p + "full_attention_interval", 2)
        .u32(p + "attention.key_length", kHeadDim)
        .u32(p + "attention.value_length", kHeadDim);
}

// A gated-delta-net block as Ollama names it: the time-step bias is blk.N.ssm_dt without .bias.
// `split_beta_alpha`: qwen35's separate ssm_beta / ssm_alpha, else qwen3next's fused ssm_ba.
OllamaGguf& delta_net_block(OllamaGguf& g, const std::string& b, bool split_beta_alpha) {
    g.tensor(b + "attn_qkv.weight", {kEmbd, 64}, kF16)
        .tensor(b + "attn_gate.weight", {kEmbd, 32}, kF16)
        .tensor(b + "ssm_conv1d.weight", {4, 64})
        .tensor(b + "ssm_dt", {4})
        .tensor(b + "ssm_a", {4})
        .tensor(b + "ssm_norm.weight", {8})
        .tensor(b + "ssm_out.weight", {32, kEmbd}, kF16);
    if (split_beta_alpha) return g.tensor(b + "ssm_beta.weight", {kEmbd, 4}, kF16).tensor(b + "ssm_alpha.weight", {kEmbd, 4}, kF16);
    return g.tensor(b + "ssm_ba.weight", {kEmbd, 8}, kF16);
}

// The gated attention block of qwen3next and qwen35: Q carries its gate (twice the width).
OllamaGguf& gated_attention_block(OllamaGguf& g, const std::string& b) {
    return g.tensor(b + "attn_q.weight", {kEmbd, kQ * 2}, kF16)
        .tensor(b + "attn_k.weight", {kEmbd, kKv}, kF16)
        .tensor(b + "attn_v.weight", {kEmbd, kKv}, kF16)
        .tensor(b + "attn_output.weight", {kQ, kEmbd}, kF16)
        .tensor(b + "attn_q_norm.weight", {kHeadDim})
        .tensor(b + "attn_k_norm.weight", {kHeadDim});
}

// The two blocks of delta_net_keys: their norms, the delta net (blk.0) or the gated attention
// (blk.1), then the FFN `ffn` writes for the block prefix.
void delta_net_blocks(OllamaGguf& g, bool split_beta_alpha, const std::function<void(const std::string&)>& ffn) {
    for (int i = 0; i < 2; ++i) {
        const std::string b = blk(i);
        g.tensor(b + "attn_norm.weight", {kEmbd}).tensor(b + "post_attention_norm.weight", {kEmbd});
        if (i == 0)
            delta_net_block(g, b, split_beta_alpha);
        else
            gated_attention_block(g, b);
        ffn(b);
    }
}

// qwen3next: a delta-net block, then an attention block, both MoE with a gated shared expert.
OllamaArchModel qwen3next() {
    OllamaGguf g("qwen3next");
    const uint64_t experts = 2, expert_ff = 32;
    delta_net_keys(g, "qwen3next.")
        .u32("qwen3next.expert_count", experts)
        .u32("qwen3next.expert_used_count", 1)
        .u32("qwen3next.expert_feed_forward_length", expert_ff)
        .u32("qwen3next.expert_shared_feed_forward_length", expert_ff);
    tiny_vocabulary(g);
    embeddings(g);
    delta_net_blocks(g, false, [&](const std::string& b) {
        expert_ffn(g, b, experts, expert_ff).tensor(b + "ffn_gate_inp_shexp.weight", {kEmbd});
        shared_expert_ffn(g, b, expert_ff);
    });
    return {"ollama-qwen3next.gguf", g.sorted_keys(), "loads_after_compat", "extra_tensor"};
}

// qwen35 (Qwen3.5): a delta-net block and an attention block, M-RoPE sections of three, the
// multi-token-prediction layer as mtp.* tensors, and the vision tower in the same file.
OllamaArchModel qwen35() {
    OllamaGguf g("qwen35");
    delta_net_keys(g, "qwen35.")
        .kv("qwen35.rope.dimension_sections", compat::array_i32({2, 1, 1}))
        .boolean("qwen35.rope.mrope_interleaved", true)
        .boolean("qwen35.ssm.v_head_reordered", true)
        .u32("qwen35.image_token_id", 5);
    qwen_vision_keys(g, "qwen35.");
    tiny_vocabulary(g);
    embeddings(g);
    delta_net_blocks(g, true, [&](const std::string& b) { dense_ffn(g, b); });
    mtp_shared(g);
    gated_attention_block(g, "mtp.layers.0.");
    dense_ffn(g, "mtp.layers.0.");
    qwen_vision_tower(g, false);
    return {"ollama-qwen35.gguf", g.sorted_keys(), "loads_after_compat", "extra_tensor"};
}

// The Nemotron-H hybrid under prefix `p`: a Mamba-2 block, an FFN (or MoE) block and an attention
// block, told apart by the per-layer head_count_kv and feed_forward_length arrays.
OllamaGguf& nemotron_keys(OllamaGguf& g, const std::string& p) {
    return g.u32(p + "context_length", 256)
        .u32(p + "embedding_length", kEmbd)
        .u32(p + "block_count", 3)
        .kv(p + "feed_forward_length", compat::array_u32({0, static_cast<uint32_t>(kFf), 0}))
        .u32(p + "attention.head_count", kHeads)
        .kv(p + "attention.head_count_kv", compat::array_u32({0, 0, kKvHeads}))
        .u32(p + "attention.key_length", kHeadDim)
        .u32(p + "attention.value_length", kHeadDim)
        .f32(p + "attention.layer_norm_epsilon", 1e-5f)
        .f32(p + "attention.layer_norm_rms_epsilon", 1e-5f)
        .u32(p + "ssm.conv_kernel", 4)
        .u32(p + "ssm.inner_size", 32)
        .u32(p + "ssm.state_size", 8)
        .u32(p + "ssm.time_step_rank", 4)
        .u32(p + "ssm.group_count", 2);
}

// The Mamba-2 block (blk.0), the attention block (blk.2) and the FFN block's norm (blk.1) of
// nemotron_keys.
OllamaGguf& nemotron_mamba_and_attention(OllamaGguf& g) {
    return g.tensor("blk.0.attn_norm.weight", {kEmbd})
        .tensor("blk.0.ssm_in.weight", {kEmbd, 2 * 32 + 2 * 2 * 8 + 4}, kF16)
        .tensor("blk.0.ssm_conv1d.weight", {4, 32 + 2 * 2 * 8})
        .tensor("blk.0.ssm_conv1d.bias", {32 + 2 * 2 * 8})
        .tensor("blk.0.ssm_dt.bias", {4})
        .tensor("blk.0.ssm_a", {1, 4})
        .tensor("blk.0.ssm_d", {1, 4})
        .tensor("blk.0.ssm_norm.weight", {16, 2})
        .tensor("blk.0.ssm_out.weight", {32, kEmbd}, kF16)
        .tensor("blk.1.attn_norm.weight", {kEmbd})
        .tensor("blk.2.attn_norm.weight", {kEmbd})
        .tensor("blk.2.attn_q.weight", {kEmbd, kQ}, kF16)
        .tensor("blk.2.attn_k.weight", {kEmbd, kKv}, kF16)
        .tensor("blk.2.attn_v.weight", {kEmbd, kKv}, kF16)
        .tensor("blk.2.attn_output.weight", {kQ, kEmbd}, kF16);
}

// nemotron_h_omni (Nemotron Nano VL): the dense hybrid text model under Ollama's omni name, with
// the RADIO vision tower (2-D patch embedding, position embedding without .weight) and the
// projector in the same file.
OllamaArchModel nemotron_h_omni() {
    OllamaGguf g("nemotron_h_omni");
    nemotron_keys(g, "nemotron_h_omni.")
        .u32("nemotron_h_omni.vision.block_count", 1)
        .u32("nemotron_h_omni.vision.embedding_length", kEmbd)
        .u32("nemotron_h_omni.vision.feed_forward_length", kFf)
        .u32("nemotron_h_omni.vision.attention.head_count", kHeads)
        .u32("nemotron_h_omni.vision.patch_size", 16)
        .u32("nemotron_h_omni.vision.image_size", 32)
        .u32("nemotron_h_omni.vision.num_channels", 3);
    tiny_vocabulary(g);
    embeddings(g);
    nemotron_mamba_and_attention(g).tensor("blk.1.ffn_up.weight", {kEmbd, kFf}, kF16).tensor("blk.1.ffn_down.weight", {kFf, kEmbd}, kF16);
    g.tensor("v.patch_embd.weight", {16 * 16 * 3, kEmbd}, kF16)
        .tensor("v.position_embd", {kEmbd, 4})
        .tensor("v.cls_embd", {kEmbd, 1}, kF16)
        .tensor("v.blk.0.ln1.weight", {kEmbd})
        .tensor("v.blk.0.ln2.weight", {kEmbd})
        .tensor("v.blk.0.attn_qkv.weight", {kEmbd, kEmbd * 3}, kF16)
        .tensor("v.blk.0.attn_out.weight", {kEmbd, kEmbd}, kF16)
        .tensor("mm.norm.weight", {kEmbd * 4})
        .tensor("mm.1.weight", {kEmbd * 4, kEmbd}, kF16)
        .tensor("mm.2.weight", {kEmbd, kEmbd}, kF16);
    dense_ffn(g, "v.blk.0.");
    return {"ollama-nemotron_h_omni.gguf", g.sorted_keys(), "loads_after_compat", "unknown_architecture"};
}

// nemotron_h_moe (Nemotron 3 Super): the latent MoE projections under Ollama's names
// ffn_latent_in / ffn_latent_out, and no moe_latent_size key (llama.cpp then expects experts of
// n_embd width). The shim looks for ffn_latent_in in blocks 0 and 1 only: the MoE block is blk.1,
// as in the real layer pattern (Mamba, MoE, ...).
OllamaArchModel nemotron_h_moe() {
    OllamaGguf g("nemotron_h_moe");
    const uint64_t experts = 4, expert_ff = 32, latent = 16, shared_ff = 64;
    nemotron_keys(g, "nemotron_h_moe.")
        .u32("nemotron_h_moe.expert_count", experts)
        .u32("nemotron_h_moe.expert_used_count", 2)
        .u32("nemotron_h_moe.expert_feed_forward_length", expert_ff)
        .u32("nemotron_h_moe.expert_shared_feed_forward_length", shared_ff)
        .u32("nemotron_h_moe.expert_shared_count", 1)
        .boolean("nemotron_h_moe.expert_weights_norm", true)
        .f32("nemotron_h_moe.expert_weights_scale", 2.5f);
    tiny_vocabulary(g);
    embeddings(g);
    nemotron_mamba_and_attention(g)
        .tensor("blk.1.ffn_gate_inp.weight", {kEmbd, experts})
        .tensor("blk.1.exp_probs_b.bias", {experts})
        .tensor("blk.1.ffn_latent_in.weight", {kEmbd, latent}, kF16)
        .tensor("blk.1.ffn_latent_out.weight", {latent, kEmbd}, kF16)
        .tensor("blk.1.ffn_up_exps.weight", {latent, expert_ff, experts}, kF16)
        .tensor("blk.1.ffn_down_exps.weight", {expert_ff, latent, experts}, kF16)
        .tensor("blk.1.ffn_up_shexp.weight", {kEmbd, shared_ff}, kF16)
        .tensor("blk.1.ffn_down_shexp.weight", {shared_ff, kEmbd}, kF16);
    return {"ollama-nemotron_h_moe.gguf", g.sorted_keys(), "loads_after_compat", "extra_tensor"};
}

// qwen35moe: qwen35's layout with MoE blocks; the MTP layer's experts are one tensor per expert
// (mtp.layers.0.mlp.experts.<e>.<gate|up|down>_proj.weight), as Ollama's converter wrote them.
OllamaArchModel qwen35moe() {
    OllamaGguf g("qwen35moe");
    const uint64_t experts = 2, expert_ff = 32;
    delta_net_keys(g, "qwen35moe.")
        .kv("qwen35moe.rope.dimension_sections", compat::array_i32({2, 1, 1}))
        .boolean("qwen35moe.rope.mrope_interleaved", true)
        .u32("qwen35moe.expert_count", experts)
        .u32("qwen35moe.expert_used_count", 1)
        .u32("qwen35moe.expert_feed_forward_length", expert_ff)
        .u32("qwen35moe.expert_shared_feed_forward_length", expert_ff);
    tiny_vocabulary(g);
    embeddings(g);
    auto shared_expert = [&](const std::string& b) {
        g.tensor(b + "ffn_gate_inp_shexp.weight", {kEmbd});
        shared_expert_ffn(g, b, expert_ff);
    };
    delta_net_blocks(g, true, [&](const std::string& b) {
        expert_ffn(g, b, experts, expert_ff);
        shared_expert(b);
    });
    const std::string mtp = "mtp.layers.0.";
    mtp_shared(g);
    gated_attention_block(g, mtp);
    g.tensor(mtp + "ffn_gate_inp.weight", {kEmbd, experts});
    shared_expert(mtp);
    for (uint64_t e = 0; e < experts; ++e) {
        const std::string x = mtp + "mlp.experts." + std::to_string(e) + ".";
        g.tensor(x + "gate_proj.weight", {kEmbd, expert_ff}, kF16)
            .tensor(x + "up_proj.weight", {kEmbd, expert_ff}, kF16)
            .tensor(x + "down_proj.weight", {expert_ff, kEmbd}, kF16);
    }
    return {"ollama-qwen35moe.gguf", g.sorted_keys(), "loads_after_compat", "extra_tensor"};
}

}  // namespace

std::vector<OllamaArchModel> hybrid_models() { return {qwen3next(), qwen35(), qwen35moe(), nemotron_h_omni(), nemotron_h_moe()}; }

}  // namespace mlens::test::ollama_parts
