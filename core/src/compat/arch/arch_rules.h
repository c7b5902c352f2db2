// ArchRules: everything the compat planner knows about one Ollama architecture, exported by its
// file under compat/arch/. `detect` is its detect_ollama_<arch> (spec §1.4), evaluated against the
// loader's current arch name; `text` is handle_<name> (it may change that name, later steps see
// the new one); `clip` is handle_<name>_clip (spec §1.5), or null when the architecture has no
// clip side. The dispatchers (text_dispatch.cpp, clip_dispatch.cpp) list these in the shim's order.
#pragma once

#include <string>

#include "compat/plan_state.h"

namespace mlens::compat {

using Detector = Detection (*)(const PlanState& s, const std::string& arch);
using TextHandler = void (*)(PlanState& s, std::string& arch);
using ClipHandler = void (*)(PlanState& s, const std::string& arch);

struct ArchRules {
    const char* name;  // the rules are recorded as handle_<name> and handle_<name>_clip
    const char* gate;  // the architecture name(s) the detector requires, as the checks show them
    Detector detect;
    TextHandler text;
    ClipHandler clip;
};

extern const ArchRules kEmbeddingGemmaRules;  // embeddinggemma.cpp
extern const ArchRules kGemma3Rules;  // gemma3.cpp
extern const ArchRules kSnowflakeArcticEmbed2Rules;  // snowflake_arctic_embed2.cpp
extern const ArchRules kGemma3nRules;  // gemma3n.cpp
extern const ArchRules kGemma4Rules;  // gemma4.cpp
extern const ArchRules kQwen35MoeRules;  // qwen35.cpp
extern const ArchRules kQwen35Rules;  // qwen35.cpp
extern const ArchRules kQwen3nextRules;  // qwen3next.cpp
extern const ArchRules kLagunaRules;  // laguna.cpp
extern const ArchRules kGptossRules;  // gptoss.cpp
extern const ArchRules kLfm2Rules;  // lfm2.cpp
extern const ArchRules kOlmo3Rules;  // olmo3.cpp
extern const ArchRules kMistral3Rules;  // mistral3.cpp
extern const ArchRules kQwen25vlRules;  // qwen25vl.cpp
extern const ArchRules kQwen3vlRules;  // qwen3vl.cpp
extern const ArchRules kGlm4moeliteRules;  // glm4moelite.cpp
extern const ArchRules kDeepseekocrRules;  // deepseekocr.cpp
extern const ArchRules kNemotronHOmniRules;  // nemotron_h.cpp
extern const ArchRules kNemotronHMoeRules;  // nemotron_h.cpp
extern const ArchRules kLlama3Rules;  // llama3.cpp
extern const ArchRules kLlama4Rules;  // llama4.cpp
extern const ArchRules kGlmocrRules;  // glmocr.cpp

}  // namespace mlens::compat
