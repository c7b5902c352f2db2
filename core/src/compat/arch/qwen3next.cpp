// qwen3next (spec §1.4): per-layer KV head counts collapsed, .ssm_dt tensors renamed .ssm_dt.bias.
#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_qwen3next(const PlanState& s, const std::string& arch) {
    if (arch != "qwen3next") return wrong_arch(arch, "qwen3next");
    for (size_t i = 0; i < s.slot_count(); ++i)
        if (s.slot(i).name.ends_with(".ssm_dt")) return {true, "marker: tensor " + s.slot(i).name + " ends .ssm_dt"};
    return {false, "no tensor name ends .ssm_dt"};
}

void handle_qwen3next(PlanState& s, std::string&) {
    s.collapse_u32_array_to_max("qwen3next.attention.head_count_kv", 0);
    rename_ssm_dt_bias(s);
}

}  // namespace

const ArchRules kQwen3nextRules = {"qwen3next", "qwen3next", detect_qwen3next, handle_qwen3next, nullptr};

}  // namespace mlens::compat
