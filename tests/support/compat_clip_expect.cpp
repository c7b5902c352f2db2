#include "compat_clip_expect.h"

#include <cstring>

namespace mlens::test {

namespace {

// typed() with strings spelled out whole.
std::string kv_text(const Value& v) { return v.is_string() ? "STRING " + v.string_value() : typed(v); }

}  // namespace

std::vector<std::string> edited_kvs(const Model& model, const compat::SidePlan& side) {
    std::vector<std::string> out;
    for (const compat::ResultKv& r : compat::upstream_view(model, side).metadata)
        if (r.edit) out.push_back(r.key + " = " + kv_text(r.value));
    return out;
}

std::vector<std::string> untouched_keys(const Model& model, const compat::SidePlan& side) {
    std::vector<std::string> out;
    for (const compat::ResultKv& r : compat::upstream_view(model, side).metadata)
        if (r.stored) out.push_back(r.key);
    return out;
}

std::string fired_check(const compat::SidePlan& side, const std::string& rule) {
    for (const compat::DetectionCheck& c : side.checks)
        if (c.rule == rule && c.fired) return c.detail;
    return {};
}

std::string op_text(const compat::SidePlan& side, size_t slot) {
    for (const compat::DataOp& op : side.data_ops) {
        if (op.dest != slot) continue;
        std::string s = std::string(compat::data_op_name(op.op)) + " sources [";
        for (size_t i = 0; i < op.sources.size(); ++i) s += (i ? "," : "") + std::to_string(op.sources[i]);
        s += "]";
        if (!op.params.empty()) {
            s += " params [";
            for (size_t i = 0; i < op.params.size(); ++i) s += (i ? "," : "") + std::to_string(op.params[i]);
            s += "]";
        }
        return s;
    }
    return "none";
}

std::string result_value_text(const Model& model, const compat::SidePlan& side, const std::string& key) {
    return kv_text(result_value(model, side, key));
}

std::string f32_text(float v) { return typed(compat::value_f32(v)).substr(std::strlen("FLOAT32 ")); }

std::string f32_array_text(const std::vector<float>& v) { return typed(compat::array_f32(v)); }

std::vector<std::string> with_clip_ending(const std::string& activation, const std::string& projector, std::vector<std::string> head) {
    head.push_back("clip.has_vision_encoder = BOOL true");
    head.push_back("clip." + activation + " = BOOL true");
    head.push_back("clip.projector_type = STRING " + projector);
    head.push_back("general.architecture = STRING clip");
    return head;
}

std::string detect_name_detail(const std::string& arch) { return "marker: architecture name " + arch + " (Ollama-only)"; }

}  // namespace mlens::test
