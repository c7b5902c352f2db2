// Pieces the text rules and detectors of several architectures share (compat/arch/*.cpp).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compat/plan_state.h"

namespace mlens::compat {

// Markers tried in order; the first that holds decides.
class Markers {
public:
    explicit Markers(const PlanState& s) : m_s(s) {}
    Markers& kv(const std::string& key) {
        return add("KV " + key, [this, key] { return m_s.has_kv(key); });
    }
    Markers& prefix(const std::string& p) {
        return add("tensor prefix " + p, [this, p] { return m_s.any_tensor_prefix(p); });
    }
    Markers& tensor(const std::string& t) {
        return add("tensor " + t, [this, t] { return m_s.tensor(t).has_value(); });
    }
    Markers& add(std::string what, std::function<bool()> test) {
        m_markers.emplace_back(std::move(what), std::move(test));
        return *this;
    }
    Detection any() const {
        std::string tried;
        for (const auto& [what, test] : m_markers) {
            if (test()) return {true, "marker: " + what};
            tried += (tried.empty() ? "" : ", ") + what;
        }
        return {false, "no marker among: " + tried};
    }

private:
    const PlanState& m_s;
    std::vector<std::pair<std::string, std::function<bool()>>> m_markers;
};

// The detection of a rule gated on another architecture name.
Detection wrong_arch(const std::string& arch, const std::string& expected);
// Ollama-only arch names: the name is the marker (gptoss, olmo3, qwen25vl, glm4moelite,
// deepseekocr, glmocr).
Detection detect_by_arch_name(const std::string& arch, const std::string& expected);

// Switches general.architecture (a set: it moves to the end) and the loader's arch name.
void switch_arch(PlanState& s, std::string& arch, const std::string& to);
// switch_arch, then every <old name>.* key copied to <to>.* (rename_kv_prefix: the old keys stay).
void rename_arch(PlanState& s, std::string& arch, const std::string& to);
// Hides the vision tower and projector tensors (v.*, mm.*) from the text side; the clip side reads them.
void hide_vision_tensors(PlanState& s);
// Renames every tensor ending `.ssm_dt` to `<name>.bias`.
void rename_ssm_dt_bias(PlanState& s);
// Sets `key` to INT32 [s0, s1, s2, 0] from the first three elements of `from` (read as int32)
// when `from` has a matching count (exactly 3, or at least 3 when `at_least`).
void pad_sections(PlanState& s, const std::string& from, const std::string& key, bool at_least);
// ne[i] of a slot, 1 beyond its dims.
uint64_t dim(const PlanState& s, size_t slot, size_t i);
// tokenizer.ggml.pre missing, empty or "default".
bool pre_is_default(const PlanState& s);

}  // namespace mlens::compat
