// lfm2 (spec §1.4): output_norm renamed token_embd_norm, pre-tokenizer and feed-forward length set.
#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_lfm2(const PlanState& s, const std::string& arch) {
    if (arch != "lfm2") return wrong_arch(arch, "lfm2");
    if (!s.tensor("output_norm.weight")) return {false, "no tensor output_norm.weight"};
    if (s.tensor("token_embd_norm.weight")) return {false, "tensor token_embd_norm.weight already present"};
    return {true, "marker: output_norm.weight without token_embd_norm.weight"};
}

void handle_lfm2(PlanState& s, std::string&) {
    s.rename_tensor("output_norm.weight", "token_embd_norm.weight");
    s.set_str("tokenizer.ggml.pre", "lfm2");
    if (auto gate = s.tensor("blk.0.ffn_gate.weight")) {
        const auto ff = static_cast<uint32_t>(dim(s, *gate, 1));
        if (s.get_u32("lfm2.feed_forward_length") != ff) s.set_u32("lfm2.feed_forward_length", ff, "blk.0.ffn_gate.weight ne[1]");
    }
}

}  // namespace

const ArchRules kLfm2Rules = {"lfm2", "lfm2", detect_lfm2, handle_lfm2, nullptr};

}  // namespace mlens::compat
