#include "compat/arch/rule_support.h"

namespace mlens::compat {

Detection wrong_arch(const std::string& arch, const std::string& expected) {
    return {false, "architecture is \"" + arch + "\", not " + expected};
}

Detection detect_by_arch_name(const std::string& arch, const std::string& expected) {
    if (arch != expected) return wrong_arch(arch, expected);
    return {true, "marker: architecture name " + expected + " (Ollama-only)"};
}

uint64_t dim(const PlanState& s, size_t slot, size_t i) {
    const auto& ne = s.slot(slot).ne;
    return i < ne.size() ? ne[i] : 1;
}

void switch_arch(PlanState& s, std::string& arch, const std::string& to) {
    s.set_str("general.architecture", to, "loader architecture " + arch + " → " + to);
    arch = to;
    s.set_arch(to);
}

void rename_arch(PlanState& s, std::string& arch, const std::string& to) {
    const std::string from = arch;
    switch_arch(s, arch, to);
    s.rename_kv_prefix(from + ".", to + ".");
}

void hide_vision_tensors(PlanState& s) {
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
}

void rename_ssm_dt_bias(PlanState& s) {
    for (size_t i = 0; i < s.slot_count(); ++i)
        if (s.slot(i).name.ends_with(".ssm_dt")) s.rename_slot(i, s.slot(i).name + ".bias");
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

bool pre_is_default(const PlanState& s) {
    auto pre = s.get_str("tokenizer.ggml.pre");
    return !pre || pre->empty() || *pre == "default";
}

}  // namespace mlens::compat
