#include "mlens/model/model_json.h"

#include <cmath>

#include "mlens/model/enum_names.h"
#include "mlens/model/shape_text.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

// Where a tensor's data starts, or null when the tensor-info list was cut and so the start of
// the data section is not known.
nlohmann::json known_offset(const TensorInfo& t) {
    return t.presence == DataPresence::unknown ? nlohmann::json(nullptr) : nlohmann::json(t.data_offset);
}

}  // namespace

nlohmann::json diagnostic_to_json(const Diagnostic& d) {
    nlohmann::json j = {{"severity", d.severity == Severity::error ? "error" : "warning"},
                        {"format", d.format},
                        {"code", code_name(d.code)},
                        {"field", d.field},
                        {"message", d.message},
                        {"file", d.file}};
    j["offset"] = d.offset ? nlohmann::json(*d.offset) : nlohmann::json(nullptr);
    return j;
}

std::optional<Diagnostic> diagnostic_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    const auto text = [&](const char* key) -> const std::string* {
        auto it = j.find(key);
        return it != j.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
    };
    const std::string *severity = text("severity"), *format = text("format"), *code = text("code"), *field = text("field"),
                      *message = text("message");
    auto file = j.find("file"), offset = j.find("offset");
    if (!severity || !format || !code || !field || !message || file == j.end() || !file->is_number_unsigned() || offset == j.end() ||
        !(offset->is_null() || offset->is_number_unsigned()))
        return std::nullopt;
    std::optional<ErrorCode> parsed = code_from_name(*code);
    if (!parsed || (*severity != "error" && *severity != "warning")) return std::nullopt;
    Diagnostic d;
    d.severity = *severity == "error" ? Severity::error : Severity::warning;
    d.format = *format;
    d.code = *parsed;
    d.field = *field;
    if (!offset->is_null()) d.offset = offset->get<uint64_t>();
    d.message = *message;
    d.file = file->get<uint32_t>();
    return d;
}


nlohmann::json tensor_type_id_json(const StorageType& type, Format format) {
    // safetensors ids index our dtype table; printing them would collide with ggml's ids.
    if (format == Format::safetensors) return nullptr;
    return type.id;
}

nlohmann::json typed_value_json(const Value& v, uint64_t max_items) {
    nlohmann::json j = {{"type", value_type_name(v.type)}, {"element_type", nullptr}, {"count", nullptr}, {"truncated", nullptr}};
    if (v.is_array()) {
        j["element_type"] = value_type_name(v.array->element_type);
        j["count"] = v.array->count;
        j["truncated"] = v.array->count > max_items;
    }
    j["value"] = value_to_json(v, max_items);
    return j;
}

nlohmann::json tensor_to_json(const TensorInfo& t, Format format) {
    nlohmann::json j = {{"name", t.name},
                        {"type", t.type.name},
                        {"type_id", tensor_type_id_json(t.type, format)},
                        {"shape", shape_in_order(t.ne, shape_order(format))},
                        {"shape_order", shape_order_name(shape_order(format))},
                        {"n_elements", t.n_elements},
                        {"offset", known_offset(t)},
                        {"relative_offset", t.relative_offset},
                        {"file", t.file}};
    auto index = [](const std::optional<size_t>& i) { return i ? nlohmann::json(*i) : nlohmann::json(nullptr); };
    j["n_bytes"] = t.n_bytes ? nlohmann::json(*t.n_bytes) : nlohmann::json(nullptr);
    j["quant"] = nullptr;
    if (t.quant) {
        const QuantLayout& q = *t.quant;
        j["quant"] = {{"type", q.type},
                      {"mode", q.mode},
                      {"bits", q.bits},
                      {"group_size", q.group_size},
                      {"origin", q.origin},
                      {"declared", q.declared.empty() ? nlohmann::json(nullptr) : nlohmann::json(q.declared)},
                      {"logical_shape", shape_in_order(q.logical_ne, shape_order(format))},
                      {"logical_elements", q.logical_elements},
                      {"scale", index(q.scale)},
                      {"bias", index(q.bias)},
                      {"global_scale", index(q.global_scale)}};
    }
    j["part_of"] = index(t.part_of);
    j["data"] = data_presence_name(t.presence);
    return j;
}

nlohmann::json group_to_json(const TensorGroup& g) {
    return {{"name", g.name}, {"kind", g.kind}, {"layout", g.layout}, {"count", g.count}, {"parts", g.parts}, {"members", g.members}};
}

nlohmann::json logical_tensor_to_json(const Model& model, const LogicalTensor& t) {
    const TensorInfo& main = model.tensors[t.index];
    const Format format = model.format;
    nlohmann::json j = {{"name", main.name},
                        {"type", t.type},
                        {"shape", shape_in_order(t.ne, shape_order(format))},
                        {"shape_order", shape_order_name(shape_order(format))},
                        {"n_elements", t.elements},
                        {"offset", known_offset(main)},
                        {"relative_offset", main.relative_offset},
                        {"file", main.file}};
    j["n_bytes"] = t.bytes ? nlohmann::json(*t.bytes) : nlohmann::json(nullptr);
    const double bpw = t.bits_per_weight();
    j["bits_per_weight"] = bpw > 0 ? nlohmann::json(bpw) : nlohmann::json(nullptr);
    j["data"] = data_presence_name(data_presence(model, t));
    j["type_id"] = nullptr;
    j["quant"] = nullptr;
    j["stored"] = nullptr;
    if (!t.folded()) {
        j["type_id"] = tensor_type_id_json(main.type, format);
    } else {
        const QuantLayout& q = *main.quant;
        j["quant"] = {{"type", q.type},     {"mode", q.mode},
                      {"bits", q.bits},     {"group_size", q.group_size},
                      {"origin", q.origin}, {"declared", q.declared.empty() ? nlohmann::json(nullptr) : nlohmann::json(q.declared)}};
        nlohmann::json stored = nlohmann::json::array();
        for (const StoredPart& p : t.parts) {
            const TensorInfo& e = model.tensors[p.entry];
            stored.push_back({{"role", p.role},
                              {"name", e.name},
                              {"type", e.type.name},
                              {"shape", shape_in_order(e.ne, shape_order(format))},
                              {"n_bytes", e.n_bytes ? nlohmann::json(*e.n_bytes) : nlohmann::json(nullptr)},
                              {"offset", e.data_offset},
                              {"file", e.file}});
        }
        j["stored"] = std::move(stored);
    }
    j["group"] = nullptr;
    if (t.group && *t.group < model.groups.size()) {
        const TensorGroup& g = model.groups[*t.group];
        j["group"] = {{"name", g.name}, {"layout", g.layout}, {"experts", g.count}};
        if (t.expert) j["group"]["expert"] = *t.expert;
    }
    return j;
}

namespace {

// A double JSON cannot hold would be dumped as null: it becomes the string the README defines.
bool has_non_finite(const nlohmann::json& j) {
    if (j.is_number_float()) return !std::isfinite(j.get<double>());
    if (j.is_structured())
        for (const nlohmann::json& v : j)
            if (has_non_finite(v)) return true;
    return false;
}

void spell_non_finite(nlohmann::json& j) {
    if (j.is_number_float()) {
        const double v = j.get<double>();
        if (!std::isfinite(v)) j = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    } else if (j.is_structured()) {
        for (nlohmann::json& v : j) spell_non_finite(v);
    }
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) {
    auto dump = [&](const nlohmann::json& value) {
        return escape_invisible_in_json(value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace));
    };
    if (!has_non_finite(j)) return dump(j);
    nlohmann::json spelled = j;
    spell_non_finite(spelled);
    return dump(spelled);
}

nlohmann::json model_to_json(const Model& model, uint64_t max_items) {
    nlohmann::json j;
    j["format"] = format_name(model.format);
    j["partial"] = model.partial;
    j["files"] = nlohmann::json::array();
    for (const SourceFile& f : model.files)
        j["files"].push_back({{"path", f.path},
                              {"size", f.source ? f.source->size() : 0},
                              {"version", f.version},
                              {"big_endian", f.big_endian},
                              {"alignment", f.alignment},
                              {"data_start", f.data_start}});
    j["metadata"] = nlohmann::json::array();
    for (const MetadataEntry& e : model.metadata) {
        nlohmann::json m = typed_value_json(e.value, max_items);
        m["key"] = e.key;
        m["offset"] = e.key_range.offset;
        if (!e.value.is_string() && !e.value.is_array())
            if (auto name = enum_value_name(e.key, e.value.scalar)) m["name"] = *name;
        j["metadata"].push_back(std::move(m));
    }
    j["tensors"] = nlohmann::json::array();
    for (const TensorInfo& t : model.tensors) j["tensors"].push_back(tensor_to_json(t, model.format));
    j["groups"] = nlohmann::json::array();
    for (const TensorGroup& g : model.groups) j["groups"].push_back(group_to_json(g));
    j["diagnostics"] = nlohmann::json::array();
    for (const Diagnostic& d : model.diagnostics) j["diagnostics"].push_back(diagnostic_to_json(d));
    return j;
}

}  // namespace mlens
