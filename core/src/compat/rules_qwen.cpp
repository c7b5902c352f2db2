// Text-side handlers for qwen3next, qwen25vl and qwen3vl/qwen3vlmoe (spec §1.4).
#include "text_rules.h"

namespace mlens::compat {

void handle_qwen3next(PlanState& s, std::string&) {
    s.collapse_u32_array_to_max("qwen3next.attention.head_count_kv", 0);
    rename_ssm_dt_bias(s);
}

void handle_qwen25vl(PlanState& s, std::string& arch) {
    switch_arch(s, arch, "qwen2vl");
    s.rename_kv_prefix("qwen25vl.", "qwen2vl.");
    pad_sections(s, "qwen2vl.rope.mrope_section", "qwen2vl.rope.dimension_sections", true);
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
}

void handle_qwen3vl(PlanState& s, std::string& arch) {
    s.set(arch + ".rope.dimension_sections", array_i32({24, 20, 20, 0}),
          "hard-coded Qwen3-VL-8B sections, whatever the model size");
    const Value* idx = s.kv(arch + ".vision.deepstack_visual_indexes");
    s.inject_u32(arch + ".n_deepstack_layers", static_cast<uint32_t>(idx ? array_count(*idx) : 0),
             "length of " + arch + ".vision.deepstack_visual_indexes");
    s.skip_prefix("v.");
    s.skip_prefix("mm.");
}

}  // namespace mlens::compat
