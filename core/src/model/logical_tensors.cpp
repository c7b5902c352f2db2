#include "mlens/model/logical_tensors.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace mlens {

namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

// The expert number of a member stored one tensor per expert: "<group>.<e>.<part>".
std::optional<uint64_t> expert_number(std::string_view name, std::string_view group) {
    if (name.size() <= group.size() + 1 || !name.starts_with(group) || name[group.size()] != '.') return std::nullopt;
    std::string_view rest = name.substr(group.size() + 1);
    uint64_t e = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), e);
    if (ec != std::errc() || ptr == rest.data() || ptr == rest.data() + rest.size() || *ptr != '.') return std::nullopt;
    return e;
}

LogicalTensor folded(const Model& model, size_t i) {
    const TensorInfo& t = model.tensors[i];
    const QuantLayout& q = *t.quant;
    LogicalTensor lt;
    lt.index = i;
    lt.type = q.group_size ? q.type + " g" + std::to_string(q.group_size) : q.type;
    const bool shaped = !q.logical_ne.empty() && q.logical_elements > 0;
    lt.ne = shaped ? q.logical_ne : t.ne;
    lt.elements = shaped ? q.logical_elements : t.n_elements;
    lt.parts.push_back({i, "packed"});
    const std::pair<const std::optional<size_t>*, const char*> companions[] = {
        {&q.scale, "scale"}, {&q.bias, "bias"}, {&q.global_scale, "global_scale"}};
    for (const auto& [part, role] : companions)
        if (*part && **part < model.tensors.size()) lt.parts.push_back({**part, role});
    uint64_t bytes = 0;
    for (const StoredPart& p : lt.parts) {
        const std::optional<uint64_t>& n = model.tensors[p.entry].n_bytes;
        if (!n) return lt;
        bytes = saturating_add(bytes, *n);
    }
    lt.bytes = bytes;
    return lt;
}

}  // namespace

double LogicalTensor::bits_per_weight() const {
    if (!bytes || elements == 0 || *bytes == UINT64_MAX) return 0.0;
    return static_cast<double>(*bytes) * 8.0 / static_cast<double>(elements);
}

std::vector<LogicalTensor> logical_tensors(const Model& model) {
    std::vector<LogicalTensor> out;
    out.reserve(model.tensors.size());
    std::vector<size_t> logical_of(model.tensors.size(), SIZE_MAX);
    for (size_t i = 0; i < model.tensors.size(); ++i) {
        const TensorInfo& t = model.tensors[i];
        if (t.part_of) continue;
        logical_of[i] = out.size();
        if (t.quant) {
            out.push_back(folded(model, i));
            continue;
        }
        LogicalTensor lt;
        lt.index = i;
        lt.type = t.type.name;
        lt.ne = t.ne;
        lt.elements = t.n_elements;
        lt.bytes = t.n_bytes;
        lt.parts.push_back({i, "data"});
        out.push_back(std::move(lt));
    }
    for (size_t g = 0; g < model.groups.size(); ++g) {
        const TensorGroup& group = model.groups[g];
        for (size_t member : group.members) {
            if (member >= logical_of.size() || logical_of[member] == SIZE_MAX) continue;
            LogicalTensor& lt = out[logical_of[member]];
            lt.group = g;
            lt.expert = expert_number(model.tensors[member].name, group.name);
        }
    }
    return out;
}

const LogicalTensor* find_logical_tensor(const std::vector<LogicalTensor>& tensors, size_t entry) {
    auto it = std::lower_bound(tensors.begin(), tensors.end(), entry, [](const LogicalTensor& t, size_t e) { return t.index < e; });
    return it != tensors.end() && it->index == entry ? &*it : nullptr;
}

DataPresence data_presence(const Model& model, const LogicalTensor& t) {
    DataPresence worst = DataPresence::complete;
    for (const StoredPart& p : t.parts) worst = std::max(worst, model.tensors[p.entry].presence);
    return worst;
}

std::string stored_as_text(const Model& model, const LogicalTensor& t) {
    std::string out;
    for (const StoredPart& p : t.parts) {
        const TensorInfo& e = model.tensors[p.entry];
        if (!out.empty()) out += std::string(" + ") + (p.role == std::string_view("global_scale") ? "global scale" : p.role) + " ";
        out += e.type.name + " [";
        for (size_t k = 0; k < e.ne.size(); ++k) out += (k ? ", " : "") + std::to_string(e.ne[k]);
        out += "]";
    }
    return out;
}

std::string expert_text(const Model& model, const LogicalTensor& t) {
    if (!t.group || *t.group >= model.groups.size()) return {};
    const uint64_t count = model.groups[*t.group].count;
    if (t.expert) return "expert " + std::to_string(*t.expert) + " of " + std::to_string(count);
    if (t.ne.size() >= 3) return std::to_string(t.ne.back()) + " experts stacked";
    return count == 1 ? "1 expert" : std::to_string(count) + " experts";
}

}  // namespace mlens
