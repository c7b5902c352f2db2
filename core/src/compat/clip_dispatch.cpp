// Clip-side dispatch (translate_clip_metadata, spec §1.5): the LLaVA projector-type default for
// any clip file, the early exit when no tensor starts with "v.", then the first detector (on the
// original metadata) that fires picks the one clip handler that runs. Every detector tried is
// recorded as a check; the ones after the winner are not evaluated, as in the shim.
#include "dispatch.h"

#include "compat/arch/arch_rules.h"

namespace mlens::compat {

namespace {

void llava_default(PlanState& s) {
    const char* rule = "handle_missing_llava_projector_type";
    const std::string arch = s.plan().arch_before;
    Detection d;
    if (arch != "clip") {
        d.detail = "architecture is \"" + arch + "\", not clip";
    } else if (const Value* v = s.kv("clip.has_vision_encoder"); !v || v->type != ValueType::boolean || v->scalar.bits == 0) {
        d.detail = !v                       ? "clip.has_vision_encoder missing"
            : v->type != ValueType::boolean ? "clip.has_vision_encoder is not BOOL"
                                            : "clip.has_vision_encoder is false";
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

constexpr const ArchRules* kClipOrder[] = {
    &kGemma3Rules, &kQwen35MoeRules, &kQwen35Rules, &kMistral3Rules, &kDeepseekocrRules, &kNemotronHOmniRules,
    &kLlama4Rules, &kGemma4Rules,    &kGlmocrRules, &kQwen25vlRules, &kQwen3vlRules,
};

}  // namespace

void dispatch_clip(PlanState& s) {
    llava_default(s);
    if (!s.any_tensor_prefix("v.")) {
        s.record_check("translate_clip_metadata", "", {false, "no tensor starts with v.: nothing to translate"});
        return;
    }
    const std::string arch = s.plan().arch_before;
    for (const ArchRules* rules : kClipOrder) {
        const std::string rule = std::string("handle_") + rules->name + "_clip";
        Detection d = rules->detect(s, arch);
        s.record_check(rule, rules->gate, d);
        if (!d.fired) continue;
        s.begin_rule(rule);
        rules->clip(s, arch);
        return;
    }
}

}  // namespace mlens::compat
