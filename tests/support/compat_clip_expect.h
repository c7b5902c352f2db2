// Expectation helpers for the clip-side compat tests: the resulting KVs an edit produced
// ("key = TYPE value", in resulting order), the stored keys left untouched, a handler's detection
// detail, and one data op as text ("<op> sources [slots] params [..]").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compat_fixture.h"

namespace mlens::test {

std::vector<std::string> edited_kvs(const Model& model, const compat::SidePlan& side);
std::vector<std::string> untouched_keys(const Model& model, const compat::SidePlan& side);
// The detail of the check of `rule` when it fired; empty when it did not fire or was not tried.
std::string fired_check(const compat::SidePlan& side, const std::string& rule);
// The data op filling `slot`, or "none".
std::string op_text(const compat::SidePlan& side, size_t slot);
std::string result_value_text(const Model& model, const compat::SidePlan& side, const std::string& key);
std::string f32_text(float v);
std::string f32_array_text(const std::vector<float>& v);
// `head` followed by the keys that close every vision projector's metadata: has_vision_encoder,
// the activation flag ("use_gelu", "use_silu"), projector_type and general.architecture = clip.
std::vector<std::string> with_clip_ending(const std::string& activation, const std::string& projector, std::vector<std::string> head);
// The detection detail of an Ollama-only architecture name.
std::string detect_name_detail(const std::string& arch);

}  // namespace mlens::test
