#include "mlens/compat/load_rewrite.h"

namespace mlens::compat {

std::optional<LoadRewrite> load_rewrite(const Model& model) { return load_rewrite(model, detect_ollama_origin(model)); }

std::optional<LoadRewrite> load_rewrite(const Model& model, OllamaOrigin origin) {
    if (!origin.ollama_made()) return std::nullopt;
    RewritePlan plan = plan_compat(model);
    if (plan.text.empty()) return std::nullopt;
    return LoadRewrite{std::move(origin), std::move(plan)};
}

KeyAfterRewrite key_after(const Model& model, const SidePlan& text, const std::string& key) {
    KeyAfterRewrite out;
    if (const MetadataEntry* stored = model.find(key)) out.value = &stored->value;
    for (const KvEdit& edit : text.kv_edits) {
        if (edit.key != key) continue;
        if (edit.op == KvOp::remove) {
            out = {};
        } else if (edit.op == KvOp::set || !out.value) {  // inject and copy only add an absent key
            out = {&edit.value, &edit};
        }
    }
    return out;
}

}  // namespace mlens::compat
