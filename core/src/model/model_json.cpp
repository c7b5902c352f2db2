#include "mlens/model/model_json.h"

#include "mlens/model/value_format.h"

namespace mlens {

nlohmann::json diagnostic_to_json(const Diagnostic& d) {
    nlohmann::json j = {{"severity", d.severity == Severity::error ? "error" : "warning"},
                        {"format", d.format}, {"code", d.code}, {"field", d.field},
                        {"message", d.message}, {"file", d.file}};
    j["offset"] = d.offset ? nlohmann::json(*d.offset) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json tensor_to_json(const TensorInfo& t) {
    nlohmann::json j = {{"name", t.name}, {"type", t.type.name}, {"type_id", t.type.id}, {"ne", t.ne},
                        {"n_elements", t.n_elements}, {"offset", t.data_offset},
                        {"relative_offset", t.relative_offset}, {"file", t.file}};
    j["n_bytes"] = t.n_bytes ? nlohmann::json(*t.n_bytes) : nlohmann::json(nullptr);
    if (t.quant) {
        const QuantLayout& q = *t.quant;
        nlohmann::json quant = {{"type", q.type}, {"mode", q.mode}, {"bits", q.bits}, {"group_size", q.group_size},
                                {"origin", q.origin}, {"logical_ne", q.logical_ne},
                                {"logical_elements", q.logical_elements}};
        if (!q.declared.empty()) quant["declared"] = q.declared;
        if (q.scale) quant["scale"] = *q.scale;
        if (q.bias) quant["bias"] = *q.bias;
        if (q.global_scale) quant["global_scale"] = *q.global_scale;
        j["quant"] = std::move(quant);
    }
    if (t.part_of) j["part_of"] = *t.part_of;
    j["data"] = data_presence_name(t.presence);
    return j;
}

nlohmann::json group_to_json(const TensorGroup& g) {
    return {{"name", g.name}, {"kind", g.kind}, {"layout", g.layout}, {"count", g.count}, {"parts", g.parts},
            {"members", g.members}};
}

nlohmann::json logical_tensor_to_json(const Model& model, const LogicalTensor& t) {
    const TensorInfo& main = model.tensors[t.index];
    nlohmann::json j = {{"name", main.name}, {"type", t.type}, {"ne", t.ne}, {"n_elements", t.elements},
                        {"offset", main.data_offset}, {"relative_offset", main.relative_offset}, {"file", main.file}};
    j["n_bytes"] = t.bytes ? nlohmann::json(*t.bytes) : nlohmann::json(nullptr);
    const double bpw = t.bits_per_weight();
    j["bits_per_weight"] = bpw > 0 ? nlohmann::json(bpw) : nlohmann::json(nullptr);
    j["data"] = data_presence_name(data_presence(model, t));
    if (!t.folded()) {
        j["type_id"] = main.type.id;
    } else {
        const QuantLayout& q = *main.quant;
        j["quant"] = {{"type", q.type}, {"mode", q.mode}, {"bits", q.bits}, {"group_size", q.group_size}, {"origin", q.origin}};
        if (!q.declared.empty()) j["quant"]["declared"] = q.declared;
        nlohmann::json stored = nlohmann::json::array();
        for (const StoredPart& p : t.parts) {
            const TensorInfo& e = model.tensors[p.entry];
            stored.push_back({{"role", p.role}, {"name", e.name}, {"type", e.type.name}, {"ne", e.ne},
                              {"n_bytes", e.n_bytes ? nlohmann::json(*e.n_bytes) : nlohmann::json(nullptr)},
                              {"offset", e.data_offset}, {"file", e.file}});
        }
        j["stored"] = std::move(stored);
    }
    if (t.group && *t.group < model.groups.size()) {
        const TensorGroup& g = model.groups[*t.group];
        j["group"] = {{"name", g.name}, {"layout", g.layout}, {"experts", g.count}};
        if (t.expert) j["group"]["expert"] = *t.expert;
    }
    return j;
}

std::string json_text(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json model_to_json(const Model& model, uint64_t max_items) {
    nlohmann::json j;
    j["format"] = format_name(model.format);
    j["partial"] = model.partial;
    j["files"] = nlohmann::json::array();
    for (const SourceFile& f : model.files)
        j["files"].push_back({{"path", f.path}, {"size", f.source ? f.source->size() : 0}, {"version", f.version},
                              {"big_endian", f.big_endian}, {"alignment", f.alignment}, {"data_start", f.data_start}});
    j["metadata"] = nlohmann::json::array();
    for (const MetadataEntry& e : model.metadata) {
        nlohmann::json m = {{"key", e.key}, {"type", value_type_name(e.value.type)}, {"offset", e.key_range.offset}};
        if (e.value.is_array()) {
            m["element_type"] = value_type_name(e.value.array->element_type);
            m["count"] = e.value.array->count;
        }
        m["value"] = value_to_json(e.value, max_items);
        j["metadata"].push_back(std::move(m));
    }
    j["tensors"] = nlohmann::json::array();
    for (const TensorInfo& t : model.tensors) j["tensors"].push_back(tensor_to_json(t));
    j["groups"] = nlohmann::json::array();
    for (const TensorGroup& g : model.groups) j["groups"].push_back(group_to_json(g));
    j["diagnostics"] = nlohmann::json::array();
    for (const Diagnostic& d : model.diagnostics) j["diagnostics"].push_back(diagnostic_to_json(d));
    return j;
}

}  // namespace mlens
