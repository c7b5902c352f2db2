#include "mlens/ollama/mlx_export.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>

#include "mlens/model/logical_tensors.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

// "<block>.switch_mlp" for a group mlx-lm stacks, nullopt for the others (shared experts).
std::optional<std::string> switch_prefix(const std::string& group) {
    for (const std::string suffix : {".experts", ".switch_mlp"})
        if (group.ends_with(suffix) && group.find(".shared_experts") == std::string::npos)
            return group.substr(0, group.size() - suffix.size()) + ".switch_mlp";
    return std::nullopt;
}

std::string path_of(const std::string& name) { return name.ends_with(".weight") ? name.substr(0, name.size() - 7) : name; }

struct QuantKey {
    std::string mode;
    uint32_t bits = 0;
    uint64_t group_size = 0;
    bool operator<(const QuantKey& o) const { return std::tie(mode, bits, group_size) < std::tie(o.mode, o.bits, o.group_size); }
    bool operator==(const QuantKey& o) const { return mode == o.mode && bits == o.bits && group_size == o.group_size; }
};

nlohmann::ordered_json quant_json(const QuantKey& k) { return {{"group_size", k.group_size}, {"bits", k.bits}, {"mode", k.mode}}; }

class MlxPlanner {
public:
    explicit MlxPlanner(const Model& model) : m_model(model) {}

    // One logical tensor, or the experts of a per-expert member stacked (entries in expert order).
    Status add(const std::string& name, const std::vector<size_t>& entries, const std::string& type) {
        const TensorInfo& first = m_model.tensors[entries.front()];
        for (size_t e : entries) {
            const TensorInfo& t = m_model.tensors[e];
            bool same = t.type.name == first.type.name && t.ne == first.ne && t.quant.has_value() == first.quant.has_value();
            if (same && t.quant)
                same = t.quant->type == first.quant->type && t.quant->group_size == first.quant->group_size &&
                    t.quant->global_scale.has_value() == first.quant->global_scale.has_value();
            if (!same)
                return Error{ErrorCode::E_EXPERT_LAYOUT, escape_for_display(name, 64), std::nullopt,
                             "the experts stacked here differ in type, group size or shape"};
        }
        if (first.quant && first.quant->global_scale) return add_dequantized(name, entries, type);
        const std::string path = path_of(name);
        copy(first.quant ? path + ".weight" : name, entries, std::nullopt, type);
        if (!first.quant) return ok_status();
        copy(path + ".scales", entries, "scale", type);
        if (first.quant->bias) copy(path + ".biases", entries, "bias", type);
        QuantKey key{first.quant->mode, first.quant->bits, first.quant->group_size};
        m_paths.emplace_back(path, key);
        if (!m_counts.count(key)) m_order.push_back(key);
        ++m_counts[key];
        return ok_status();
    }

    Result<MlxPlan> finish(uint64_t shard_limit) {
        MlxPlan plan;
        plan.layout.dtype = HfDtype::bf16;
        plan.layout.dtype_origin = "dequantized tensors only";
        auto config_text = m_model.get_string("file:config.json");
        if (!config_text)
            return Error{ErrorCode::E_EXPORT, "config.json", std::nullopt, "the model has no config.json layer, which mlx-lm needs"};
        // The source's own quantization blocks describe its tensors, not these: only ours is written.
        std::optional<nlohmann::ordered_json> cleaned = config_without_quantization(*config_text);
        if (!cleaned) return Error{ErrorCode::E_EXPORT, "config.json", std::nullopt, "config.json is not a JSON object"};
        nlohmann::ordered_json config = std::move(*cleaned);
        if (!m_order.empty()) {
            QuantKey common = m_order.front();
            for (const QuantKey& k : m_order)
                if (m_counts[k] > m_counts[common]) common = k;
            nlohmann::ordered_json q = quant_json(common);
            for (const auto& [path, key] : m_paths)
                if (!(key == common)) q[path] = quant_json(key);
            for (const std::string& path : m_dequantized) q[path] = false;
            config["quantization"] = q;
            config["quantization_config"] = q;
        }
        plan.config_json = config.dump(4) + "\n";
        for (const std::string& path : m_dequantized)
            plan.notes.push_back(escape_for_display(path) +
                                 ": nvfp4 with a global scale, which MLX's QuantizedLinear cannot hold; written dequantized as BF16");
        if (m_stacked) plan.notes.push_back(std::to_string(m_stacked) + " per-expert tensors stacked into switch_mlp tensors");
        if (Status s = shard_tensors(plan.layout, std::move(m_tensors), shard_limit); !s) return s.error();
        return plan;
    }

    void count_stacked(size_t n) { m_stacked += n; }

private:
    void copy(const std::string& name, const std::vector<size_t>& entries, std::optional<const char*> part, const std::string& type) {
        HfTensor t;
        t.name = name;
        t.entry = entries.front();
        for (size_t e : entries) {
            const TensorInfo& info = m_model.tensors[e];
            size_t source = e;
            if (part) source = std::string(*part) == "scale" ? *info.quant->scale : *info.quant->bias;
            t.sources.push_back(source);
            t.bytes += m_model.tensors[source].n_bytes.value_or(0);
        }
        const TensorInfo& source = m_model.tensors[t.sources.front()];
        t.dtype = source.type.name;
        t.ne = source.ne;
        if (entries.size() > 1) t.ne.push_back(entries.size());
        t.source_type = type;
        t.mode = type + " (bit for bit)";
        m_tensors.push_back(std::move(t));
    }

    Status add_dequantized(const std::string& name, const std::vector<size_t>& entries, const std::string& type) {
        if (entries.size() > 1)
            return Error{ErrorCode::E_EXPERT_LAYOUT, escape_for_display(name, 64), std::nullopt,
                         "per-expert nvfp4 tensors with a global scale cannot be stacked"};
        const TensorInfo& info = m_model.tensors[entries.front()];
        HfTensor t;
        t.name = name;
        t.entry = entries.front();
        t.converted = true;
        t.dtype = "BF16";
        t.ne = info.quant->logical_ne;
        t.bytes = info.quant->logical_elements * 2;
        t.source_type = type;
        t.mode = type + " dequantized";
        m_dequantized.push_back(path_of(name));
        m_tensors.push_back(std::move(t));
        return ok_status();
    }

    const Model& m_model;
    std::vector<HfTensor> m_tensors;
    std::vector<std::pair<std::string, QuantKey>> m_paths;
    std::map<QuantKey, size_t> m_counts;
    std::vector<QuantKey> m_order;
    std::vector<std::string> m_dequantized;
    size_t m_stacked = 0;
};

}  // namespace

std::optional<std::string> mlx_stacked_name(const std::string& name, const std::string& group) {
    std::optional<std::string> prefix = switch_prefix(group);
    if (!prefix) return std::nullopt;
    return *prefix + name.substr(group.size());
}

Result<MlxPlan> plan_mlx_export(const Model& model, uint64_t shard_limit) {
    const std::vector<LogicalTensor> tensors = logical_tensors(model);
    // Per-expert members, gathered by (group, rest of the name) in expert order.
    std::map<std::pair<size_t, std::string>, std::map<uint64_t, size_t>> per_expert;
    auto rest_after_expert = [&](const LogicalTensor& lt) {
        const std::string& name = model.tensors[lt.index].name;
        const std::string& group = model.groups[*lt.group].name;
        std::string rest = name.substr(group.size() + 1);
        return rest.substr(rest.find('.') + 1);
    };
    for (const LogicalTensor& lt : tensors)
        if (lt.group && lt.expert && switch_prefix(model.groups[*lt.group].name))
            per_expert[{*lt.group, rest_after_expert(lt)}][*lt.expert] = lt.index;

    MlxPlanner planner(model);
    for (const LogicalTensor& lt : tensors) {
        const TensorInfo& info = model.tensors[lt.index];
        if (info.quant && info.quant->logical_ne.empty())
            return Error{ErrorCode::E_UNSUPPORTED_TYPE, escape_for_display(info.name, 64), std::nullopt,
                         "the quantization of this tensor is unknown"};
        std::optional<std::string> prefix = lt.group ? switch_prefix(model.groups[*lt.group].name) : std::nullopt;
        if (!prefix) {
            if (Status s = planner.add(info.name, {lt.index}, lt.type); !s) return s.error();
            continue;
        }
        const std::string& group = model.groups[*lt.group].name;
        if (!lt.expert) {
            const std::string name = lt.ne.size() == 3 ? *mlx_stacked_name(info.name, group) : info.name;
            if (Status s = planner.add(name, {lt.index}, lt.type); !s) return s.error();
            continue;
        }
        const auto& experts = per_expert[{*lt.group, rest_after_expert(lt)}];
        if (experts.begin()->second != lt.index) continue;  // stacked when the first expert is met
        std::vector<size_t> entries;
        uint64_t expected = 0;
        for (const auto& [e, index] : experts) {
            if (e != expected++)
                return Error{ErrorCode::E_EXPERT_LAYOUT, escape_for_display(info.name, 64), std::nullopt, "the expert numbers have a gap"};
            entries.push_back(index);
        }
        planner.count_stacked(entries.size());
        if (Status s = planner.add(*prefix + "." + rest_after_expert(lt), entries, lt.type); !s) return s.error();
    }
    return planner.finish(shard_limit);
}

}  // namespace mlens
