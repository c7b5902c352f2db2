// detect_ollama_<arch> of spec §1.4, shared by the text dispatch and the clip dispatch (which
// evaluates them on the original metadata). Each returns whether it fired and the marker that
// decided, or the markers it tried.
#pragma once

#include <string>

#include "plan_state.h"

namespace mlens::compat {

Detection detect_embeddinggemma(const PlanState& s, const std::string& arch);
Detection detect_gemma3(const PlanState& s, const std::string& arch);
Detection detect_snowflake(const PlanState& s, const std::string& arch);
Detection detect_gemma3n(const PlanState& s, const std::string& arch);
Detection detect_gemma4(const PlanState& s, const std::string& arch);
Detection detect_qwen35moe(const PlanState& s, const std::string& arch);
Detection detect_qwen35(const PlanState& s, const std::string& arch);
Detection detect_qwen3next(const PlanState& s, const std::string& arch);
Detection detect_laguna(const PlanState& s, const std::string& arch);
Detection detect_lfm2(const PlanState& s, const std::string& arch);
Detection detect_mistral3(const PlanState& s, const std::string& arch);
Detection detect_qwen3vl(const PlanState& s, const std::string& arch);
Detection detect_nemotron_h_omni(const PlanState& s, const std::string& arch);
Detection detect_nemotron_h_moe(const PlanState& s, const std::string& arch);
Detection detect_llama3(const PlanState& s, const std::string& arch);
Detection detect_llama4(const PlanState& s, const std::string& arch);
// Ollama-only arch names: the name is the marker (gptoss, olmo3, qwen25vl, glm4moelite,
// deepseekocr, glmocr).
Detection detect_by_arch_name(const std::string& arch, const std::string& expected);

}  // namespace mlens::compat
