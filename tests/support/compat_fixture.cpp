#include "compat_fixture.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/model/value_format.h"
#include "model_parts.h"

namespace mlens::test {

OllamaGguf::OllamaGguf(std::string arch) {
    m_model.format = Format::gguf;
    str("general.architecture", std::move(arch));
}

OllamaGguf& OllamaGguf::kv(const std::string& key, Value v) {
    add_metadata(m_model, key, std::move(v));
    return *this;
}

OllamaGguf& OllamaGguf::tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type) {
    TensorInfo t = tensor_info(name, type, std::move(ne));
    if (!t.n_bytes) throw std::runtime_error("bad fixture tensor " + name);
    m_model.tensors.push_back(std::move(t));
    return *this;
}

OllamaGguf& OllamaGguf::sorted_keys() {
    const std::string prefix = m_model.get_string("general.architecture").value_or("") + ".";
    auto map_key = [&](const std::string& k) { return k.starts_with(prefix) ? k.substr(prefix.size()) : k; };
    std::stable_sort(m_model.metadata.begin(), m_model.metadata.end(),
                     [&](const MetadataEntry& a, const MetadataEntry& b) { return map_key(a.key) < map_key(b.key); });
    return *this;
}

Model OllamaGguf::write(const TempDir& dir, const std::string& name) const {
    const std::string path = dir.file(name);
    Status s = write_gguf(m_model, path, nullptr, [](size_t, uint64_t, uint64_t len, void* dst) -> Status {
        std::memset(dst, 0, len);
        return ok_status();
    });
    if (!s) throw std::runtime_error(s.error().to_string());
    auto model = open_gguf(path);
    if (!model || model->partial) throw std::runtime_error("cannot read back " + path);
    return std::move(model).value();
}

std::vector<std::string> result_keys(const Model& model, const compat::SidePlan& side) {
    std::vector<std::string> out;
    for (const compat::ResultKv& r : compat::upstream_view(model, side).metadata) out.push_back(r.key);
    return out;
}

std::vector<std::string> stored_keys(const Model& model) {
    std::vector<std::string> out;
    for (const MetadataEntry& e : model.metadata) out.push_back(e.key);
    return out;
}

std::vector<std::string> keys_after(const Model& model, const std::vector<std::string>& appended, const std::vector<std::string>& removed) {
    std::vector<std::string> out;
    auto listed = [](const std::vector<std::string>& v, const std::string& k) { return std::find(v.begin(), v.end(), k) != v.end(); };
    for (const MetadataEntry& e : model.metadata)
        if (!listed(appended, e.key) && !listed(removed, e.key)) out.push_back(e.key);
    out.insert(out.end(), appended.begin(), appended.end());
    return out;
}

Value result_value(const Model& model, const compat::SidePlan& side, const std::string& key) {
    for (const compat::ResultKv& r : compat::upstream_view(model, side).metadata)
        if (r.key == key) return r.value;
    Value missing;
    missing.type = ValueType::array;
    return missing;
}

std::string typed(const Value& v) {
    if (v.is_array() && !v.array) return "<absent>";
    return format_type(v) + " " + format_value(v, UINT64_MAX, size_t{1} << 20);
}

std::vector<std::string> result_tensors(const Model& model, const compat::SidePlan& side) {
    compat::UpstreamView view = compat::upstream_view(model, side);
    std::vector<std::string> out;
    for (const compat::ResultTensor& t : view.tensors) {
        std::string s = t.name + " " + t.type.name + " [";
        for (size_t i = 0; i < t.ne.size(); ++i) s += (i ? "," : "") + std::to_string(t.ne[i]);
        s += "]";
        if (t.hidden) s += " hidden";
        if (t.data_op) s += std::string(" op=") + compat::data_op_name(side.data_ops[*t.data_op].op);
        out.push_back(s);
    }
    return out;
}

}  // namespace mlens::test
