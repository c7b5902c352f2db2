// gptoss (spec §1.4): Ollama's name for gpt-oss; keys, pre-tokenizer and tensor names renamed.
#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_gptoss(const PlanState&, const std::string& arch) { return detect_by_arch_name(arch, "gptoss"); }

void handle_gptoss(PlanState& s, std::string& arch) {
    rename_arch(s, arch, "gpt-oss");
    if (auto gate = s.tensor("blk.0.ffn_gate_exps.weight"))
        s.inject_u32("gpt-oss.expert_feed_forward_length", static_cast<uint32_t>(dim(s, *gate, 1)), "blk.0.ffn_gate_exps.weight ne[1]");
    s.inject_str("gpt-oss.rope.scaling.type", "yarn");
    s.set_str("tokenizer.ggml.pre", "gpt-4o");
    s.rename_tensors_containing(".attn_out", ".attn_output");
    s.rename_tensors_containing(".attn_sinks", ".attn_sinks.weight");
    s.rename_tensors_containing(".ffn_norm", ".post_attention_norm");
}

}  // namespace

const ArchRules kGptossRules = {"gptoss", "gptoss", detect_gptoss, handle_gptoss, nullptr};

}  // namespace mlens::compat
