// embeddinggemma (spec §1.4): a gemma3 file with dense.0/dense.1 projections becomes gemma-embedding.
#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_embeddinggemma(const PlanState& s, const std::string& arch) {
    if (arch != "gemma3") return wrong_arch(arch, "gemma3");
    if (s.tensor("dense.0.weight")) return {true, "marker: tensor dense.0.weight"};
    return {false, "no tensor dense.0.weight"};
}

void handle_embeddinggemma(PlanState& s, std::string& arch) {
    rename_arch(s, arch, "gemma-embedding");
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

}  // namespace

const ArchRules kEmbeddingGemmaRules = {"embeddinggemma", "gemma3", detect_embeddinggemma, handle_embeddinggemma, nullptr};

}  // namespace mlens::compat
