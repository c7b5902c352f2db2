// glm4moelite (spec §1.4): Ollama's name for a deepseek2 (MLA) model.
#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

void glm4moelite_eog(PlanState& s) {
    const bool need_eot = !s.has_kv("tokenizer.ggml.eot_token_id");
    const bool need_eom = !s.has_kv("tokenizer.ggml.eom_token_id");
    if (!need_eot && !need_eom) return;
    const Value* v = s.kv("tokenizer.ggml.eos_token_ids");
    if (!v || !v->is_array()) return;
    auto et = array_element_type(*v);
    if (et != ValueType::i32 && et != ValueType::u32) return;
    std::vector<uint32_t> ids;
    const auto elems = array_scalars(*v);
    for (const Scalar& e : *elems)
        if (et == ValueType::u32 || e.as_int() >= 0) ids.push_back(static_cast<uint32_t>(e.bits));
    if (need_eot && ids.size() >= 2) s.set_u32("tokenizer.ggml.eot_token_id", ids[1], "eos_token_ids[1]");
    if (need_eom && ids.size() >= 3) s.set_u32("tokenizer.ggml.eom_token_id", ids[2], "eos_token_ids[2]");
}

Detection detect_glm4moelite(const PlanState&, const std::string& arch) { return detect_by_arch_name(arch, "glm4moelite"); }

void handle_glm4moelite(PlanState& s, std::string& arch) {
    rename_arch(s, arch, "deepseek2");
    s.set_u32("deepseek2.attention.head_count_kv", 1, "MLA absorbs the KV heads");
    auto rank = s.get_u32("deepseek2.attention.kv_lora_rank");
    auto rope = s.get_u32("deepseek2.rope.dimension_count");
    if (rank && rope) {
        s.set_u32("deepseek2.attention.key_length", *rank + *rope, "kv_lora_rank + rope.dimension_count");
        s.set_u32("deepseek2.attention.value_length", *rank, "kv_lora_rank");
    }
    if (auto head = s.get_u32("glm4moelite.attention.key_length")) {
        s.set_u32("deepseek2.attention.key_length_mla", *head, "per-head dim from glm4moelite.attention.key_length");
        s.set_u32("deepseek2.attention.value_length_mla", *head, "per-head dim from glm4moelite.attention.key_length");
    }
    s.inject_u32("deepseek2.expert_group_count", 1);
    s.inject_u32("deepseek2.expert_group_used_count", 1);
    s.set_str("tokenizer.ggml.pre", "glm4");
    glm4moelite_eog(s);
}

}  // namespace

const ArchRules kGlm4moeliteRules = {"glm4moelite", "glm4moelite", detect_glm4moelite, handle_glm4moelite, nullptr};

}  // namespace mlens::compat
