// Text-side handlers of spec §1.4 (handle_<arch>). Each runs after its detector fired, mutates the
// PlanState, and may change `arch` (the loader's arch_name; later dispatch steps see the new value).
#pragma once

#include <string>

#include "plan_state.h"

namespace mlens::compat {

// gemma family: rules_gemma.cpp
void handle_embeddinggemma(PlanState& s, std::string& arch);
void handle_gemma3(PlanState& s, std::string& arch);
void handle_gemma3n(PlanState& s, std::string& arch);
void handle_gemma4(PlanState& s, std::string& arch);
// qwen family: rules_qwen.cpp, rules_qwen35.cpp
void handle_qwen35_like(PlanState& s, std::string& arch);  // handle_qwen35 and handle_qwen35moe
void handle_qwen3next(PlanState& s, std::string& arch);
void handle_qwen25vl(PlanState& s, std::string& arch);
void handle_qwen3vl(PlanState& s, std::string& arch);
// renamed-arch and small fixes: rules_misc.cpp
void handle_snowflake_arctic_embed2(PlanState& s, std::string& arch);
void handle_laguna(PlanState& s, std::string& arch);
void handle_gptoss(PlanState& s, std::string& arch);
void handle_lfm2(PlanState& s, std::string& arch);
void handle_olmo3(PlanState& s, std::string& arch);
void handle_mistral3(PlanState& s, std::string& arch);
void handle_llama3_metadata(PlanState& s, std::string& arch);
void handle_llama4(PlanState& s, std::string& arch);
// deepseek / glm / nemotron: rules_deepseek_glm.cpp
void handle_glm4moelite(PlanState& s, std::string& arch);
void handle_deepseekocr(PlanState& s, std::string& arch);
void handle_glmocr(PlanState& s, std::string& arch);
void handle_nemotron_h_omni(PlanState& s, std::string& arch);
void handle_nemotron_h_moe(PlanState& s, std::string& arch);

// Shared pieces.
// Switches general.architecture (a set: it moves to the end) and the loader's arch name.
void switch_arch(PlanState& s, std::string& arch, const std::string& to);
// Renames every tensor ending `.ssm_dt` to `<name>.bias`.
void rename_ssm_dt_bias(PlanState& s);
// Sets `key` to INT32 [s0, s1, s2, 0] from the first three elements of `from` (read as int32)
// when `from` has a matching count (exactly 3, or at least 3 when `at_least`).
void pad_sections(PlanState& s, const std::string& from, const std::string& key, bool at_least);
// ne[i] of a slot, 1 beyond its dims.
uint64_t dim(const PlanState& s, size_t slot, size_t i);

}  // namespace mlens::compat
