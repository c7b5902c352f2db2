// translate_metadata (spec §1.4): the 22 dispatch steps in the shim's order. Every step is
// recorded as a check; a handler runs only when its detector fires.
#include "dispatch.h"

#include "detectors.h"
#include "text_rules.h"

namespace mlens::compat {

namespace {

using Detector = Detection (*)(const PlanState&, const std::string&);
using Handler = void (*)(PlanState&, std::string&);

void step(PlanState& s, std::string& arch, const char* rule, const char* gate, Detector detect, Handler handle) {
    Detection d = detect(s, arch);
    s.record_check(rule, gate, d);
    if (!d.fired) return;
    s.begin_rule(rule);
    handle(s, arch);
}

Detection by_name(const std::string& arch, const char* expected) { return detect_by_arch_name(arch, expected); }

}  // namespace

void dispatch_text(PlanState& s) {
    std::string arch = s.plan().arch_before;
    step(s, arch, "handle_embeddinggemma", "gemma3", detect_embeddinggemma, handle_embeddinggemma);
    step(s, arch, "handle_gemma3", "gemma3", detect_gemma3, handle_gemma3);
    step(s, arch, "handle_snowflake_arctic_embed2", "bert", detect_snowflake, handle_snowflake_arctic_embed2);
    step(s, arch, "handle_gemma3n", "gemma3n", detect_gemma3n, handle_gemma3n);
    step(s, arch, "handle_gemma4", "gemma4", detect_gemma4, handle_gemma4);
    step(s, arch, "handle_qwen35moe", "qwen35moe", detect_qwen35moe, handle_qwen35_like);
    step(s, arch, "handle_qwen35", "qwen35", detect_qwen35, handle_qwen35_like);
    step(s, arch, "handle_qwen3next", "qwen3next", detect_qwen3next, handle_qwen3next);
    step(s, arch, "handle_laguna", "laguna", detect_laguna, handle_laguna);
    step(s, arch, "handle_gptoss", "gptoss", [](const PlanState&, const std::string& a) { return by_name(a, "gptoss"); }, handle_gptoss);
    step(s, arch, "handle_lfm2", "lfm2", detect_lfm2, handle_lfm2);
    step(s, arch, "handle_olmo3", "olmo3", [](const PlanState&, const std::string& a) { return by_name(a, "olmo3"); }, handle_olmo3);
    step(s, arch, "handle_mistral3", "mistral3", detect_mistral3, handle_mistral3);
    step(s, arch, "handle_qwen25vl", "qwen25vl", [](const PlanState&, const std::string& a) { return by_name(a, "qwen25vl"); }, handle_qwen25vl);
    step(s, arch, "handle_qwen3vl", "qwen3vl, qwen3vlmoe", detect_qwen3vl, handle_qwen3vl);
    step(s, arch, "handle_glm4moelite", "glm4moelite", [](const PlanState&, const std::string& a) { return by_name(a, "glm4moelite"); }, handle_glm4moelite);
    step(s, arch, "handle_deepseekocr", "deepseekocr", [](const PlanState&, const std::string& a) { return by_name(a, "deepseekocr"); }, handle_deepseekocr);
    step(s, arch, "handle_nemotron_h_omni", "nemotron_h_omni", detect_nemotron_h_omni, handle_nemotron_h_omni);
    step(s, arch, "handle_nemotron_h_moe", "nemotron_h_moe", detect_nemotron_h_moe, handle_nemotron_h_moe);
    step(s, arch, "handle_llama3_metadata", "llama", detect_llama3, handle_llama3_metadata);
    step(s, arch, "handle_llama4", "llama4", detect_llama4, handle_llama4);
    step(s, arch, "handle_glmocr", "glmocr", [](const PlanState&, const std::string& a) { return by_name(a, "glmocr"); }, handle_glmocr);
    s.set_arch(arch);
}

}  // namespace mlens::compat
