#include "ggml_agreement.h"

#include <gguf.h>

#include <cstring>

namespace mlens::test {

namespace {

// ggml hands strings out as C strings: compare ours up to its first NUL, as ggml's API shows it.
bool same_c_string(std::string_view ours, const char* theirs) { return ours.substr(0, ours.find('\0')) == std::string_view(theirs); }

std::string array_disagreement(const gguf_context* g, int64_t id, const ArrayIndex& a) {
    if (static_cast<uint32_t>(gguf_get_arr_type(g, id)) != static_cast<uint32_t>(a.element_type)) return "element type";
    if (gguf_get_arr_n(g, id) != a.count) return "element count";
    std::string diff;
    if (a.element_type == ValueType::string) {
        uint64_t seen = 0;
        a.for_each_string(0, UINT64_MAX, [&](uint64_t i, std::string_view s) {
            ++seen;
            if (same_c_string(s, gguf_get_arr_str(g, id, i))) return true;
            diff = "string element " + std::to_string(i);
            return false;
        });
        if (diff.empty() && seen != a.count) diff = "string elements unreadable";
        return diff;
    }
    const auto* data = static_cast<const uint8_t*>(gguf_get_arr_data(g, id));
    uint32_t size = value_type_size(a.element_type);
    for (uint64_t i = 0; i < a.count; ++i) {
        uint64_t theirs = 0;
        std::memcpy(&theirs, data + i * size, size);
        if (a.scalar_at(i).bits != theirs) return "element " + std::to_string(i);
    }
    return {};
}

std::string value_disagreement(const gguf_context* g, int64_t id, const Value& v) {
    if (v.is_array()) return array_disagreement(g, id, *v.array);
    if (v.is_string()) return same_c_string(v.string_value(), gguf_get_val_str(g, id)) ? "" : "string value";
    uint64_t theirs = 0;
    std::memcpy(&theirs, gguf_get_val_data(g, id), value_type_size(v.type));
    return v.scalar.bits == theirs ? "" : "scalar value";
}

}  // namespace

std::string ggml_disagreement(const Model& ours, const gguf_context* g) {
    if (gguf_get_n_kv(g) != static_cast<int64_t>(ours.metadata.size())) return "number of keys";
    for (int64_t id = 0; id < gguf_get_n_kv(g); ++id) {
        const MetadataEntry& e = ours.metadata[id];
        std::string where = "kv[" + std::to_string(id) + "] ";
        if (!same_c_string(e.key, gguf_get_key(g, id))) return where + "key";
        if (static_cast<uint32_t>(gguf_get_kv_type(g, id)) != static_cast<uint32_t>(e.value.type)) return where + "type";
        if (std::string d = value_disagreement(g, id, e.value); !d.empty()) return where + d;
    }
    if (gguf_get_n_tensors(g) != static_cast<int64_t>(ours.tensors.size())) return "number of tensors";
    for (int64_t id = 0; id < gguf_get_n_tensors(g); ++id) {
        const TensorInfo& t = ours.tensors[id];
        std::string where = "tensors[" + std::to_string(id) + "] ";
        if (!same_c_string(t.name, gguf_get_tensor_name(g, id))) return where + "name";
        if (t.type.id != static_cast<uint32_t>(gguf_get_tensor_type(g, id))) return where + "type";
        const int64_t* ne = gguf_get_tensor_ne(g, id);
        for (size_t d = 0; d < 4; ++d)
            if (static_cast<int64_t>(d < t.ne.size() ? t.ne[d] : 1) != ne[d]) return where + "ne";
        if (t.data_offset != gguf_get_data_offset(g) + gguf_get_tensor_offset(g, id)) return where + "offset";
        if (t.n_bytes.value_or(0) != gguf_get_tensor_size(g, id)) return where + "size";
    }
    if (gguf_get_alignment(g) != ours.files[0].alignment) return "alignment";
    return {};
}

}  // namespace mlens::test
