#include "text_rules.h"

#include <string>

namespace mlens::compat {

namespace {

// Appendix A: injected when a gemma3 file has no chat template.
constexpr const char* kGemma3ChatTemplate = R"TMPL({{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %})TMPL";

bool gemma4_has_sidecars(const PlanState& s, const std::string& b) {
    for (const char* suffix : {".ffn_gate_exps.scale", ".ffn_gate_exps.input_scale", ".ffn_up_exps.scale", ".ffn_up_exps.input_scale"})
        if (s.tensor(b + suffix)) return true;
    return false;
}

// The per-expert gate/up fuse of one gemma4 block; true when it fused.
bool gemma4_fuse_block(PlanState& s, uint32_t block) {
    const std::string b = "blk." + std::to_string(block);
    if (gemma4_has_sidecars(s, b)) return false;
    auto gate = s.tensor(b + ".ffn_gate_exps.weight");
    auto up = s.tensor(b + ".ffn_up_exps.weight");
    if (!gate || !up || s.tensor(b + ".ffn_gate_up_exps.weight")) return false;
    if (s.slot(*gate).type != s.slot(*up).type) return false;
    for (size_t i = 0; i < 3; ++i)
        if (dim(s, *gate, i) != dim(s, *up, i)) return false;
    const uint64_t n_expert = dim(s, *gate, 2);
    const auto& gate_bytes = s.model().tensors[*gate].n_bytes;
    const auto& up_bytes = s.model().tensors[*up].n_bytes;
    if (n_expert == 0 || !gate_bytes || gate_bytes != up_bytes || *gate_bytes % n_expert != 0) return false;
    const uint64_t n_embd = dim(s, *gate, 0), n_ff = dim(s, *gate, 1);
    s.rename_slot(*gate, b + ".ffn_gate_up_exps.weight", "gate and up experts fused");
    s.set_shape(*gate, {n_embd, 2 * n_ff, n_expert}, "fused gate/up: rows 0..n_ff-1 gate, n_ff..2n_ff-1 up per expert");
    DataOp op;
    op.op = DataOpKind::interleave_experts;
    op.dest = *gate;
    op.sources = {*gate, *up};
    op.params = {static_cast<int64_t>(n_expert)};
    op.note = "per expert: gate bytes, then up bytes";
    s.add_data_op(std::move(op));
    s.skip_prefix(b + ".ffn_up_exps.weight");
    return true;
}

}  // namespace

void handle_embeddinggemma(PlanState& s, std::string& arch) {
    switch_arch(s, arch, "gemma-embedding");
    s.rename_kv_prefix("gemma3.", "gemma-embedding.");
    s.remove("gemma-embedding.attention.causal");
    s.remove("gemma-embedding.attention.sliding_window_pattern");
    s.inject_f32("gemma-embedding.rope.freq_base_swa", 10000.0f);
    auto d0 = s.tensor("dense.0.weight");
    auto d1 = s.tensor("dense.1.weight");
    if (d0 && d1) {
        s.set_u32("gemma-embedding.dense_2_feat_in", static_cast<uint32_t>(dim(s, *d0, 0)), "dense.0.weight ne[0]");
        s.set_u32("gemma-embedding.dense_2_feat_out", static_cast<uint32_t>(dim(s, *d0, 1)), "dense.0.weight ne[1]");
        s.set_u32("gemma-embedding.dense_3_feat_in", static_cast<uint32_t>(dim(s, *d1, 0)), "dense.1.weight ne[0]");
        s.set_u32("gemma-embedding.dense_3_feat_out", static_cast<uint32_t>(dim(s, *d1, 1)), "dense.1.weight ne[1]");
    }
    s.rename_tensor("dense.0.weight", "dense_2.weight");
    s.rename_tensor("dense.1.weight", "dense_3.weight");
    s.rename_tensor("norm.weight", "output_norm.weight");
}

// No RMSNorm +1 shift: Ollama's gemma3 files already carry it.
void handle_gemma3(PlanState& s, std::string&) {
    s.copy_f32("gemma3.rope.global.freq_base", "gemma3.rope.freq_base");
    s.copy_f32("gemma3.rope.local.freq_base", "gemma3.rope.freq_base_swa");
    s.inject_f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
    s.inject_f32("gemma3.rope.freq_base", 1000000.0f);
    s.inject_f32("gemma3.rope.freq_base_swa", 10000.0f);
    s.inject_str("tokenizer.chat_template", kGemma3ChatTemplate);
    if (auto ctx = s.get_u32("gemma3.context_length"); ctx && *ctx >= 131072) {
        s.inject_str("gemma3.rope.scaling.type", "linear", "context_length >= 131072");
        s.inject_f32("gemma3.rope.scaling.factor", 8.0f, "context_length >= 131072");
    }
    if (auto te = s.tensor("token_embd.weight")) {
        const uint64_t rows = dim(s, *te, 1);
        s.truncate_str_arr("tokenizer.ggml.tokens", rows);
        s.truncate_data_arr("tokenizer.ggml.scores", ValueType::f32, rows);
        s.truncate_data_arr("tokenizer.ggml.token_type", ValueType::i32, rows);
    }
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
}

// AMBIGUOUS (spec §1.4): the shim's README says gemma3n hides embedded vision/audio tensors, but
// its code registers no skip prefix. We follow the code: nothing is hidden.
void handle_gemma3n(PlanState& s, std::string&) {
    auto pl = s.tensor("per_layer_token_embd.weight");
    const uint64_t vocab = dim(s, *pl, 1);
    s.set_str("tokenizer.ggml.model", "llama",
          "AMBIGUOUS: the shim README says gemma3n hides vision/audio tensors; its code hides none, and neither do we");
    if (auto te = s.tensor("token_embd.weight"))
        s.set_shape(*te, {dim(s, *te, 0), vocab}, "rows cut to per_layer_token_embd's; the loader reads the first rows");
    s.truncate_str_arr("tokenizer.ggml.tokens", vocab);
    s.truncate_data_arr("tokenizer.ggml.scores", ValueType::f32, vocab);
    s.truncate_data_arr("tokenizer.ggml.token_type", ValueType::i32, vocab);

    const Value* tokens = s.kv("tokenizer.ggml.tokens");
    const Value* types = s.kv("tokenizer.ggml.token_type");
    if (tokens && types && array_element_type(*types) == ValueType::i32) {
        auto elems = array_scalars(*types);
        auto names = array_strings_of(*tokens);
        const uint64_t n = std::min<uint64_t>(elems->size(), vocab);
        std::vector<int32_t> fixed;
        for (uint64_t i = 0; i < n; ++i) {
            int32_t t = static_cast<int32_t>((*elems)[i].bits);
            const std::string tok = names && i < names->size() ? (*names)[i] : std::string();
            if (tok.size() == 6 && tok.compare(0, 3, "<0x") == 0 && tok[5] == '>') t = 6;
            else if (tok.compare(0, 7, "<unused") == 0) t = 1;
            fixed.push_back(t);
        }
        s.set("tokenizer.ggml.token_type", array_i32(fixed), "byte tokens <0x..> typed BYTE (6), <unused…> typed NORMAL (1)");
    }

    const Value* eos = s.kv("tokenizer.ggml.eos_token_ids");
    if (eos && eos->is_array()) {
        auto et = array_element_type(*eos);
        if (et == ValueType::i32 || et == ValueType::u32) {
            auto elems = array_scalars(*eos);
            bool has106 = false;
            for (const Scalar& e : *elems) has106 |= static_cast<uint32_t>(e.bits) == 106u;
            std::vector<uint32_t> ids;
            for (const Scalar& e : *elems) ids.push_back(static_cast<uint32_t>(e.bits));
            if (!has106) ids.push_back(106);
            if (et == ValueType::u32) {
                s.set("tokenizer.ggml.eos_token_ids", array_u32(ids), "106 (<end_of_turn>) added if absent");
            } else {
                std::vector<int32_t> signed_ids(ids.begin(), ids.end());
                s.set("tokenizer.ggml.eos_token_ids", array_i32(signed_ids), "106 (<end_of_turn>) added if absent");
            }
        }
    } else {
        s.set("tokenizer.ggml.eos_token_ids", array_i32({1, 106}), "missing: set to [1, 106]");
    }
}

void handle_gemma4(PlanState& s, std::string&) {
    if (s.get_str("tokenizer.ggml.model") == "llama")
        s.set_str("tokenizer.ggml.model", "gemma4", "BPE with the file's merges and pre gemma4");
    for (const char* p : {"a.", "v.", "mm.", "model.vision_tower."}) s.skip_prefix(p);
    const uint32_t blocks = s.block_span("blk.", s.get_u32("gemma4.block_count").value_or(0));
    bool fused = false;
    for (uint32_t b = 0; b < blocks; ++b) {
        fused |= gemma4_fuse_block(s, b);
        const std::string blk = "blk." + std::to_string(b);
        s.rename_tensor(blk + ".ffn_gate_inp.per_expert_scale", blk + ".ffn_down_exps.scale");
    }
    if (fused) s.disable_mmap();
}

}  // namespace mlens::compat
