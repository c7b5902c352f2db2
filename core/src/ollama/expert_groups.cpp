// Expert groups of tensor blobs: Ollama's ExpertGroupPrefix rule applied to every packed entry,
// then one group per prefix, described by what its members and blob names show.
#include <map>
#include <set>

#include "mlens/ollama/tensor_blobs.h"
#include "mlens/text/digits.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr std::string_view kMarkers[] = {".mlp.experts.", ".mlp.shared_experts.", ".mlp.switch_mlp.",
                                         ".moe.experts.", ".mixer.experts.",      ".mixer.shared_experts."};
constexpr std::string_view kLayerPrefixes[] = {"model.language_model.backbone.",
                                               "model.language_model.",
                                               "language_model.model.",
                                               "language_model.",
                                               "language_model.backbone.",
                                               "model.",
                                               "backbone.",
                                               "mtp.",
                                               ""};
constexpr std::string_view kDraftPrefix = "draft.";
constexpr std::string_view kWeight = ".weight";

// "layers.<digits>" behind one of the optional prefixes, and nothing else.
bool is_layer_path(std::string_view s) {
    for (std::string_view p : kLayerPrefixes) {
        if (!s.starts_with(p)) continue;
        std::string_view rest = s.substr(p.size());
        if (rest.starts_with("layers.") && all_decimal_digits(rest.substr(7))) return true;
    }
    return false;
}

struct Membership {
    std::string group;  // prefix + marker without its trailing dot
    std::string marker;
    std::optional<std::string> expert;  // per-expert index
    std::string part;  // e.g. gate_proj
};

std::optional<Membership> membership(std::string_view name) {
    if (name.size() <= kWeight.size() || name.substr(name.size() - kWeight.size()) != kWeight) return std::nullopt;
    std::string_view body = name.substr(0, name.size() - kWeight.size());
    size_t skip = body.starts_with(kDraftPrefix) ? kDraftPrefix.size() : 0;
    for (std::string_view marker : kMarkers) {
        size_t at = body.find(marker, skip);
        if (at == std::string_view::npos || !is_layer_path(body.substr(skip, at - skip))) continue;
        Membership m;
        m.group = std::string(body.substr(0, at + marker.size() - 1));
        m.marker = std::string(marker);
        std::string_view rest = body.substr(at + marker.size());
        size_t dot = rest.find('.');
        if (dot != std::string_view::npos && all_decimal_digits(rest.substr(0, dot))) {
            m.expert = std::string(rest.substr(0, dot));
            rest = rest.substr(dot + 1);
        }
        if (rest.empty()) return std::nullopt;
        m.part = std::string(rest);
        return m;
    }
    return std::nullopt;
}

struct Building {
    TensorGroup group;
    std::string marker;
    std::set<std::string> experts;
    bool per_expert = false, stacked = false, single = false;
};

std::string blob_of(const Model& m, const std::vector<std::string>& names, size_t tensor) {
    uint32_t f = m.tensors[tensor].file;
    return f < names.size() ? names[f] : std::string();
}

std::string describe_layout(const Model& m, const std::vector<std::string>& names, const Building& b) {
    const TensorGroup& g = b.group;
    bool in_group_blob = true, blob_per_tensor = true, experts_blob = true, known = true;
    for (size_t i : g.members) {
        std::string blob = blob_of(m, names, i);
        known &= !blob.empty();
        in_group_blob &= blob == g.name;
        blob_per_tensor &= blob == m.tensors[i].name;
        experts_blob &= blob.size() > 12 && blob.ends_with(".mlp.experts");
    }
    if (b.per_expert && b.stacked) return "mixed: per-expert and stacked tensors";
    if (b.per_expert)
        return known && in_group_blob ? "per-expert tensors packed in one group blob (2026-02 to 2026-03 layout)"
                                      : "per-expert tensors, not stacked";
    if (b.single) return known && blob_per_tensor ? "one unstacked expert, one blob per tensor" : "one unstacked expert";
    if (!known) return "stacked [experts, out, in]";
    if (b.marker == ".mlp.switch_mlp." && experts_blob && !in_group_blob)
        return "stacked switch_mlp tensors in a blob named ...mlp.experts (2026-03 to 2026-07 layout)";
    if (in_group_blob) return "stacked, every projection in one group blob (current layout)";
    if (blob_per_tensor) return "stacked, one blob per tensor (current layout)";
    return "stacked [experts, out, in]";
}

}  // namespace

void find_expert_groups(Model& model, const std::vector<std::string>& blob_names) {
    std::vector<Building> building;
    std::map<std::string, size_t> by_name;
    for (size_t i = 0; i < model.tensors.size(); ++i) {
        const TensorInfo& t = model.tensors[i];
        if (t.part_of) continue;
        auto m = membership(t.name);
        if (!m) continue;
        auto [it, fresh] = by_name.emplace(m->group, building.size());
        if (fresh) {
            building.emplace_back();
            building.back().group.name = m->group;
            building.back().group.kind = "experts";
            building.back().marker = m->marker;
        }
        Building& b = building[it->second];
        b.group.members.push_back(i);
        bool new_part = true;
        for (const std::string& p : b.group.parts) new_part &= p != m->part;
        if (new_part) b.group.parts.push_back(m->part);
        const std::vector<uint64_t>& ne = t.quant && !t.quant->logical_ne.empty() ? t.quant->logical_ne : t.ne;
        if (m->expert) {
            b.per_expert = true;
            b.experts.insert(*m->expert);
        } else if (ne.size() >= 3) {
            b.stacked = true;
            uint64_t count = ne.back();
            if (b.group.count != 0 && b.group.count != count)
                model.diagnostics.push_back(
                    {Severity::warning, "store", ErrorCode::W_EXPERT_COUNT_MISMATCH, escape_for_display(t.name, 120), std::nullopt,
                     "stacks " + std::to_string(count) + " experts; the group's first member stacks " + std::to_string(b.group.count),
                     t.file});
            if (b.group.count == 0) b.group.count = count;
        } else {
            b.single = true;
        }
    }
    for (Building& b : building) {
        if (b.per_expert)
            b.group.count = b.experts.size();
        else if (!b.stacked)
            b.group.count = 1;
        b.group.layout = describe_layout(model, blob_names, b);
        model.groups.push_back(std::move(b.group));
    }
}

}  // namespace mlens
