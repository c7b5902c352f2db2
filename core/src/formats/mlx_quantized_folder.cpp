#include "mlx_quantized_folder.h"

#include <nlohmann/json.hpp>

#include <unordered_map>

#include "mlens/io/checked_math.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr uint64_t kMaxConfigBytes = 4u << 20;

struct MlxParams {
    uint64_t group_size = 0;
    uint32_t bits = 0;
    std::string mode = "affine";
};

// {group_size, bits, mode}; nullopt unless group_size and bits are positive integers (bits 1..8).
std::optional<MlxParams> params_of(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    auto group = j.find("group_size"), bits = j.find("bits"), mode = j.find("mode");
    if (group == j.end() || bits == j.end() || !group->is_number_unsigned() || !bits->is_number_unsigned()) return std::nullopt;
    MlxParams p;
    p.group_size = group->get<uint64_t>();
    const uint64_t b = bits->get<uint64_t>();
    if (p.group_size == 0 || b == 0 || b > 8) return std::nullopt;
    p.bits = static_cast<uint32_t>(b);
    if (mode != j.end() && mode->is_string()) p.mode = mode->get<std::string>();
    return p;
}

// The quantization object of config.json, or null when the folder is not MLX-quantized.
nlohmann::json quantization_of(const MetadataEntry* e) {
    if (!e || !e->value.is_string()) return nullptr;
    nlohmann::json config = nlohmann::json::parse(e->value.string_value(kMaxConfigBytes), nullptr, false);
    if (!config.is_object()) return nullptr;
    if (auto q = config.find("quantization"); q != config.end() && q->is_object()) return *q;
    if (auto q = config.find("quantization_config");
        q != config.end() && q->is_object() && q->contains("group_size") && q->contains("bits") && !q->contains("quant_method"))
        return *q;
    return nullptr;
}

class MlxDescriber {
public:
    MlxDescriber(Model& model, uint32_t config_file) : m_model(model), m_config_file(config_file) {
        for (size_t i = 0; i < model.tensors.size(); ++i) m_index.emplace(model.tensors[i].name, i);
    }

    void run(const nlohmann::json& quantization) {
        const std::optional<MlxParams> defaults = params_of(quantization);
        bool warned = false;
        for (size_t i = 0; i < m_model.tensors.size(); ++i) {
            const TensorInfo& t = m_model.tensors[i];
            if (!t.name.ends_with(".weight") || t.part_of) continue;
            const std::string path = t.name.substr(0, t.name.size() - 7);
            auto scale = find(path + ".scales");
            if (!scale) continue;
            std::optional<MlxParams> params = defaults;
            std::string origin = "config.json quantization";
            if (auto own = quantization.find(path); own != quantization.end()) {
                if (own->is_boolean() && !own->get<bool>()) continue;
                if (own->is_object()) {
                    params = params_of(*own);
                    origin += "." + path;
                }
            }
            if (!params) {
                if (!warned)
                    warn("file:config.json", ErrorCode::W_QUANT_UNKNOWN,
                         "the quantization of " + escape_for_display(path) + " has no positive integer group_size and bits", m_config_file);
                warned = true;
                continue;
            }
            describe(i, *scale, find(path + ".biases"), *params, origin);
        }
    }

private:
    std::optional<size_t> find(const std::string& name) const {
        auto it = m_index.find(name);
        if (it == m_index.end()) return std::nullopt;
        return it->second;
    }

    void describe(size_t i, size_t scale, std::optional<size_t> bias, const MlxParams& p, const std::string& origin) {
        TensorInfo& t = m_model.tensors[i];
        if (t.type.name != "U32" || t.ne.empty() || 32 % p.bits != 0) return;
        QuantLayout q;
        q.type = p.mode == "affine" ? "int" + std::to_string(p.bits) : p.mode;
        q.mode = p.mode;
        q.bits = p.bits;
        q.group_size = p.group_size;
        q.origin = origin;
        q.scale = scale;
        q.bias = bias;
        if (!q.unpack_shape(t.ne)) return;
        const TensorInfo& s = m_model.tensors[scale];
        bool consistent = s.ne.size() == t.ne.size();
        for (size_t k = 1; consistent && k < t.ne.size(); ++k) consistent = s.ne[k] == t.ne[k];
        auto covered = checked_mul(s.ne.empty() ? 0 : s.ne[0], p.group_size);
        if (!consistent || !covered || *covered != q.logical_ne[0])
            warn(escape_for_display(t.name, 120), ErrorCode::W_QUANT_SHAPE_MISMATCH,
                 "the scales' shape does not match " + std::to_string(q.logical_ne[0]) + " values per row in groups of " +
                     std::to_string(p.group_size),
                 t.file);
        m_model.tensors[scale].part_of = i;
        if (bias) m_model.tensors[*bias].part_of = i;
        t.quant = std::move(q);
    }

    void warn(std::string field, ErrorCode code, std::string message, uint32_t file) {
        m_model.diagnostics.push_back({Severity::warning, "safetensors", code, std::move(field), std::nullopt, std::move(message), file});
    }

    Model& m_model;
    uint32_t m_config_file;
    std::unordered_map<std::string, size_t> m_index;
};

}  // namespace

void describe_mlx_quantization(Model& model) {
    const MetadataEntry* config = model.find("file:config.json");
    if (config && config->value.is_string() &&
        !nlohmann::json::parse(config->value.string_value(kMaxConfigBytes), nullptr, false).is_object())
        model.diagnostics.push_back({Severity::warning, "safetensors", ErrorCode::W_SIDE_FILE_SKIPPED, config->key, std::nullopt,
                                     "config.json is not a JSON object: the architecture and any quantization it would give are not "
                                     "read",
                                     config->file});
    const nlohmann::json quantization = quantization_of(config);
    if (quantization.is_object()) MlxDescriber(model, config->file).run(quantization);
}

}  // namespace mlens
