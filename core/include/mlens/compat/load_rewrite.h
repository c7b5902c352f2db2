// The rewrite ModelLens applies before it hands a GGUF to llama.cpp, asked in one place by the
// inference loader (model_loader.h), the "will it load" verdict (loadability.h), the template lab
// (template_lab.h) and the overview (model_overview.h), so that they never disagree on which
// files llama.cpp sees rewritten, or on what it then reads.
//
// Contract:
//  - load_rewrite(model) is the compat plan (plan_compat) of a GGUF that is Ollama-made on
//    evidence (detect_ollama_origin) and whose text side changes something, with that evidence;
//    nullopt for every other model, which llama.cpp is given as it is. Reads metadata and tensor
//    names only; never fails. The overload taking an origin uses it instead of detecting again.
//  - key_after(model, text, key) replays the text side's edits of one key over the stored
//    metadata, as upstream_view does: the value llama.cpp reads for it after the rewrite (nullptr
//    when the key is absent then) and the edit that gave that value (nullptr when it is the
//    stored one).
#pragma once

#include <optional>
#include <string>

#include "mlens/compat/ollama_origin.h"
#include "mlens/compat/rewrite_plan.h"

namespace mlens::compat {

struct LoadRewrite {
    OllamaOrigin origin;
    RewritePlan plan;
};

std::optional<LoadRewrite> load_rewrite(const Model& model);
std::optional<LoadRewrite> load_rewrite(const Model& model, OllamaOrigin origin);

struct KeyAfterRewrite {
    const Value* value = nullptr;
    const KvEdit* edit = nullptr;
};

KeyAfterRewrite key_after(const Model& model, const SidePlan& text, const std::string& key);

}  // namespace mlens::compat
