// Clip-side dispatch (translate_clip_metadata, spec §1.5): the LLaVA projector-type default for
// any clip file, the early exit when no tensor starts with "v.", then the first detector (on the
// original metadata) that fires picks the one clip handler that runs. Every detector tried is
// recorded as a check; the ones after the winner are not evaluated, as in the shim.
#include "clip_handlers.h"
#include "detectors.h"
#include "dispatch.h"

namespace mlens::compat {

namespace {

void llava_default(PlanState& s) {
    const char* rule = "handle_missing_llava_projector_type";
    const std::string arch = s.plan().arch_before;
    Detection d;
    if (arch != "clip") {
        d.detail = "architecture is \"" + arch + "\", not clip";
    } else if (const Value* v = s.kv("clip.has_vision_encoder"); !v || v->type != ValueType::boolean || v->scalar.bits == 0) {
        d.detail = !v ? "clip.has_vision_encoder missing" : v->type != ValueType::boolean ? "clip.has_vision_encoder is not BOOL" : "clip.has_vision_encoder is false";
    } else if (s.has_kv("clip.projector_type") || s.has_kv("clip.vision.projector_type")) {
        d.detail = "a projector type is present";
    } else {
        d = {true, "marker: clip file with a vision encoder and no projector type"};
    }
    s.record_check(rule, "clip", d);
    if (!d.fired) return;
    s.begin_rule(rule);
    s.set_str("clip.projector_type", "mlp");
}

struct ClipStep {
    const char* rule;
    const char* gate;
    Detection (*detect)(const PlanState&, const std::string&);
    void (*handle)(PlanState&, const std::string&);
};

Detection by_deepseekocr(const PlanState&, const std::string& a) { return detect_by_arch_name(a, "deepseekocr"); }
Detection by_glmocr(const PlanState&, const std::string& a) { return detect_by_arch_name(a, "glmocr"); }
Detection by_qwen25vl(const PlanState&, const std::string& a) { return detect_by_arch_name(a, "qwen25vl"); }

const ClipStep kClipSteps[] = {
    {"handle_gemma3_clip", "gemma3", detect_gemma3, [](PlanState& s, const std::string&) { handle_gemma3_clip(s); }},
    {"handle_qwen35moe_clip", "qwen35moe", detect_qwen35moe, handle_qwen35_like_clip},
    {"handle_qwen35_clip", "qwen35", detect_qwen35, handle_qwen35_like_clip},
    {"handle_mistral3_clip", "mistral3", detect_mistral3, [](PlanState& s, const std::string&) { handle_mistral3_clip(s); }},
    {"handle_deepseekocr_clip", "deepseekocr", by_deepseekocr, [](PlanState& s, const std::string&) { handle_deepseekocr_clip(s); }},
    {"handle_nemotron_h_omni_clip", "nemotron_h_omni", detect_nemotron_h_omni,
     [](PlanState& s, const std::string&) { handle_nemotron_h_omni_clip(s); }},
    {"handle_llama4_clip", "llama4", detect_llama4, [](PlanState& s, const std::string&) { handle_llama4_clip(s); }},
    {"handle_gemma4_clip", "gemma4", detect_gemma4, [](PlanState& s, const std::string&) { handle_gemma4_clip(s); }},
    {"handle_glmocr_clip", "glmocr", by_glmocr, [](PlanState& s, const std::string&) { handle_glmocr_clip(s); }},
    {"handle_qwen25vl_clip", "qwen25vl", by_qwen25vl, [](PlanState& s, const std::string&) { handle_qwen25vl_clip(s); }},
    {"handle_qwen3vl_clip", "qwen3vl, qwen3vlmoe", detect_qwen3vl, handle_qwen3vl_clip},
};

}  // namespace

void dispatch_clip(PlanState& s) {
    llava_default(s);
    if (!s.any_tensor_prefix("v.")) {
        s.record_check("translate_clip_metadata", "", {false, "no tensor starts with v.: nothing to translate"});
        return;
    }
    const std::string arch = s.plan().arch_before;
    for (const ClipStep& step : kClipSteps) {
        Detection d = step.detect(s, arch);
        s.record_check(step.rule, step.gate, d);
        if (!d.fired) continue;
        s.begin_rule(step.rule);
        step.handle(s, arch);
        return;
    }
}

}  // namespace mlens::compat
