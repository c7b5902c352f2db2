// Quantized tensors of tensor blobs: companions by name, then type and group size from metadata
// or shapes (tensor_blobs.h states the rules and their order).
#include <unordered_map>

#include "mlens/io/checked_math.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr QuantParams kQuantTable[] = {
    {"int4", "affine", 4, 64}, {"int8", "affine", 8, 64}, {"nvfp4", "nvfp4", 4, 16}, {"mxfp4", "mxfp4", 4, 32}, {"mxfp8", "mxfp8", 8, 32},
};
// Ollama's Params() fallback for a type it does not know.
constexpr QuantParams kUnknownParams = {"", "affine", 8, 32};
constexpr uint64_t kMetadataValueBytes = 256;

std::optional<uint64_t> parse_decimal(std::string_view s) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        auto next = checked_mul(v, 10);
        if (!next || !(next = checked_add(*next, static_cast<uint64_t>(c - '0')))) return std::nullopt;
        v = *next;
    }
    return v;
}

using MetadataMap = std::unordered_map<std::string, std::string>;

class QuantDescriber {
public:
    QuantDescriber(Model& model, std::optional<uint32_t> hint) : m_model(model), m_hint(hint) {
        m_meta.resize(model.files.size());
        for (const MetadataEntry& e : model.metadata)
            if (e.value.is_string() && e.file < m_meta.size()) m_meta[e.file].emplace(e.key, e.value.string_value(kMetadataValueBytes));
        for (size_t i = 0; i < model.tensors.size(); ++i) {
            const TensorInfo& t = model.tensors[i];
            if (!m_index.emplace(t.name, i).second)
                warn(t, ErrorCode::W_DUPLICATE_TENSOR_NAME,
                     "\"" + escape_for_display(t.name) + "\" appears in more than one blob; the first is used");
        }
    }

    void run() {
        auto& ts = m_model.tensors;
        for (size_t i = 0; i < ts.size(); ++i) {
            if (ts[i].type.name != "U32" || m_index.at(ts[i].name) != i) continue;
            auto scale = find(ts[i].name + ".scale");
            if (!scale) continue;
            QuantLayout q;
            q.scale = scale;
            q.bias = find(ts[i].name + ".bias");
            q.global_scale = find(ts[i].name + ".global_scale");
            for (auto c : {q.scale, q.bias, q.global_scale})
                if (c) ts[*c].part_of = i;
            decide(i, q);
            ts[i].quant = std::move(q);
        }
    }

private:
    std::optional<size_t> find(const std::string& name) const {
        auto it = m_index.find(name);
        if (it == m_index.end()) return std::nullopt;
        return it->second;
    }

    const std::string* meta(uint32_t file, const std::string& key) const {
        if (file >= m_meta.size()) return nullptr;
        auto it = m_meta[file].find(key);
        return it == m_meta[file].end() || it->second.empty() ? nullptr : &it->second;
    }

    void decide(size_t i, QuantLayout& q) {
        const TensorInfo& t = m_model.tensors[i];
        const TensorInfo& scale = m_model.tensors[*q.scale];
        std::string type_origin, group_origin;
        std::optional<uint64_t> group;
        const QuantParams* params = nullptr;
        if (const std::string* d = meta(t.file, t.name + ".quant_type")) {
            q.declared = *d;
            type_origin = "tensor metadata";
        } else if ((d = meta(t.file, "quant_type"))) {
            q.declared = *d;
            type_origin = "blob metadata";
        }
        if (!type_origin.empty()) {
            auto norm = normalize_quant_type(q.declared);
            params = norm ? quant_params(*norm) : nullptr;
            if (!params) {
                warn(t, ErrorCode::W_UNKNOWN_QUANT_TYPE,
                     "quant_type \"" + escape_for_display(q.declared, 40) +
                         "\" is not int4, int8, nvfp4, mxfp4 or mxfp8; read as 8-bit affine, group 32 (Ollama's fallback)");
                params = &kUnknownParams;
            }
        } else {
            params = infer(t, scale, group);
            type_origin = "inferred from shapes";
            group_origin = type_origin;
        }
        if (!params) {
            q.type = "unknown";
            q.origin = "no quant_type metadata; shapes do not decide";
            warn(t, ErrorCode::W_QUANT_UNKNOWN,
                 "no quant_type in the blob metadata and the shapes of the tensor and its scale do "
                 "not determine the quantization");
            return;
        }
        q.type = params == &kUnknownParams ? q.declared : params->type;
        q.mode = params->mode;
        q.bits = params->bits;
        if (!group) {
            const std::string* gs = meta(t.file, t.name + ".group_size");
            group_origin = gs ? "tensor metadata" : "blob metadata";
            if (!gs) gs = meta(t.file, "group_size");
            if (gs) {
                group = parse_decimal(*gs);
                if (!group || *group == 0) {
                    warn(t, ErrorCode::W_BAD_GROUP_SIZE,
                         "group_size \"" + escape_for_display(*gs, 40) + "\" is not a positive decimal; the table default is used");
                    group.reset();
                }
            }
            if (!group) {
                group = params->group_size;
                group_origin = "table default";
            }
        }
        q.group_size = *group;
        q.origin = "type: " + type_origin + "; group size: " + group_origin;
        logical_shape(t, scale, q);
        if (q.mode == std::string_view("affine") && !q.bias)
            warn(t, ErrorCode::W_QUANT_MISSING_BIAS, "affine quantization needs " + escape_for_display(t.name) + ".bias (the zero-point)");
    }

    // Ollama's shape rule (root.go) for affine scales; our reading of U8 scales as fp modes.
    const QuantParams* infer(const TensorInfo& t, const TensorInfo& scale, std::optional<uint64_t>& group) {
        if (t.ne.empty() || scale.ne.empty() || scale.ne[0] == 0) return nullptr;
        auto bits4 = checked_mul(t.ne[0], 8), bits8 = checked_mul(t.ne[0], 4);
        if (!bits4 || !bits8) return nullptr;
        const uint64_t sc = scale.ne[0];
        const uint64_t r4 = *bits4 % sc == 0 ? *bits4 / sc : 0, r8 = *bits8 % sc == 0 ? *bits8 / sc : 0;
        auto pick = [&](const char* type, uint64_t g) {
            group = g;
            return quant_params(type);
        };
        if (scale.type.name == "U8") {
            if (r4 == 16) return pick("nvfp4", 16);
            if (r4 == 32) return pick("mxfp4", 32);
            if (r4 == 64) return pick("mxfp8", 32);
            return nullptr;
        }
        if (r4 == 32) return pick("int4", 32);
        if (r8 == 64) return pick("int8", 64);
        if (r4 == 64) {
            if (m_hint == 8u) return pick("int8", 32);
            if (!m_hint || *m_hint != 4)
                warn(t, ErrorCode::W_QUANT_AMBIGUOUS,
                     "the shapes fit both int4 group 64 and int8 group 32 and no bits hint was "
                     "found; read as int4 group 64");
            return pick("int4", 64);
        }
        auto common = [](uint64_t r) { return r == 16 || r == 32 || r == 64 || r == 128; };
        if (common(r4) != common(r8)) return common(r4) ? pick("int4", r4) : pick("int8", r8);
        return nullptr;
    }

    void logical_shape(const TensorInfo& t, const TensorInfo& scale, QuantLayout& q) {
        if (t.ne.empty()) return;
        if (!q.unpack_shape(t.ne)) {
            warn(t, ErrorCode::W_QUANT_SHAPE_MISMATCH, "the unpacked row length overflows 64 bits");
            return;
        }
        bool consistent = scale.ne.size() == t.ne.size();
        for (size_t k = 1; consistent && k < t.ne.size(); ++k) consistent = scale.ne[k] == t.ne[k];
        auto covered = checked_mul(scale.ne.empty() ? 0 : scale.ne[0], q.group_size);
        if (!consistent || !covered || *covered != q.logical_ne[0])
            warn(t, ErrorCode::W_QUANT_SHAPE_MISMATCH,
                 "the scale's shape does not match " + std::to_string(q.logical_ne[0]) + " values per row in groups of " +
                     std::to_string(q.group_size));
    }

    void warn(const TensorInfo& t, ErrorCode code, std::string message) {
        m_model.diagnostics.push_back(
            {Severity::warning, "store", code, escape_for_display(t.name, 120), std::nullopt, std::move(message), t.file});
    }

    Model& m_model;
    std::optional<uint32_t> m_hint;
    std::vector<MetadataMap> m_meta;
    std::unordered_map<std::string, size_t> m_index;
};

}  // namespace

const QuantParams* quant_params(std::string_view type) {
    for (const QuantParams& p : kQuantTable)
        if (type == p.type) return &p;
    return nullptr;
}

std::optional<std::string> normalize_quant_type(std::string_view declared) {
    std::string up;
    for (char c : declared) up += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    if (up == "INT4" || up == "Q4" || up == "FP4") return "int4";
    if (up == "INT8" || up == "Q8" || up == "FP8") return "int8";
    if (up == "NVFP4") return "nvfp4";
    if (up == "MXFP4") return "mxfp4";
    if (up == "MXFP8") return "mxfp8";
    return std::nullopt;
}

void describe_quantized_tensors(Model& model, std::optional<uint32_t> bits_hint) { QuantDescriber(model, bits_hint).run(); }

void describe_tensor_blobs(Model& model, const std::vector<std::string>& blob_names, std::optional<uint32_t> bits_hint) {
    describe_quantized_tensors(model, bits_hint);
    find_expert_groups(model, blob_names);
}

}  // namespace mlens
