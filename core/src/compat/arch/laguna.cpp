// laguna (spec §1.4): sliding-window rope keys under upstream's names, attn_g renamed attn_gate.
#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_laguna(const PlanState& s, const std::string& arch) {
    if (arch != "laguna") return wrong_arch(arch, "laguna");
    return Markers(s).kv("laguna.rope.swa.dimension_count").kv("laguna.rope.swa.freq_base").tensor("blk.0.attn_g.weight").any();
}

// clang-format off
constexpr KeyCopy kSwaKeys[] = {
    {"rope.swa.dimension_count", "laguna.rope.dimension_count_swa", CopyAs::u32},
    {"rope.swa.freq_base", "laguna.rope.freq_base_swa", CopyAs::f32},
};
// clang-format on

void handle_laguna(PlanState& s, std::string&) {
    s.copy_keys("laguna.", kSwaKeys);
    for (size_t i = 0; i < s.slot_count(); ++i) {
        const std::string& name = s.slot(i).name;
        if (name.ends_with(".attn_g.weight")) s.rename_slot(i, name.substr(0, name.size() - 14) + ".attn_gate.weight");
    }
}

}  // namespace

const ArchRules kLagunaRules = {"laguna", "laguna", detect_laguna, handle_laguna, nullptr};

}  // namespace mlens::compat
