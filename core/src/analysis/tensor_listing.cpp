#include "mlens/analysis/tensor_listing.h"

#include <algorithm>
#include <regex>

#include "mlens/text/escape.h"
#include "mlens/text/text_search.h"

namespace mlens {

namespace {

constexpr size_t kRegexNameBytes = 256;

uint64_t sat_add(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

void add(TensorTotals& t, const LogicalTensor& tensor) {
    t.count += 1;
    t.elements = sat_add(t.elements, tensor.elements);
    t.bytes = sat_add(t.bytes, tensor.bytes.value_or(0));
}

// Orders two tensors by one column; false when equal so stable_sort keeps file order.
bool less_by(const Model& m, TensorColumn column, const LogicalTensor& a, const LogicalTensor& b) {
    const TensorInfo& x = m.tensors[a.index];
    const TensorInfo& y = m.tensors[b.index];
    switch (column) {
        case TensorColumn::file_order:
            return false;
        case TensorColumn::name:
            return x.name < y.name;
        case TensorColumn::type:
            return a.type < b.type;
        case TensorColumn::shape:
            if (a.ne.size() != b.ne.size()) return a.ne.size() < b.ne.size();
            return std::lexicographical_compare(a.ne.rbegin(), a.ne.rend(), b.ne.rbegin(), b.ne.rend());
        case TensorColumn::elements:
            return a.elements < b.elements;
        case TensorColumn::size:
            return a.bytes.value_or(0) < b.bytes.value_or(0);
        case TensorColumn::offset:
            return x.file != y.file ? x.file < y.file : x.data_offset < y.data_offset;
        case TensorColumn::bits_per_weight:
            return a.bits_per_weight() < b.bits_per_weight();
    }
    return false;
}

}  // namespace

double TensorTotals::bits_per_weight() const {
    if (elements == 0 || elements == UINT64_MAX || bytes == UINT64_MAX) return 0.0;
    return static_cast<double>(bytes) * 8.0 / static_cast<double>(elements);
}

Result<TensorListing> list_tensors(const Model& model, const std::vector<LogicalTensor>& tensors, const std::vector<LayerSummary>& layers,
                                   const TensorQuery& query) {
    TensorListing out;
    out.layer_totals.resize(layers.size());
    std::optional<std::regex> pattern;
    if (query.regex && !query.text.empty()) {
        try {
            pattern.emplace(query.text, std::regex::ECMAScript | std::regex::icase);
        } catch (const std::regex_error& e) {
            return Error{ErrorCode::E_ARGS, "", std::nullopt, escape_for_display(e.what(), 200)};
        }
    }
    // Layer membership of each stored entry, from the index.
    std::vector<size_t> layer_of_entry(model.tensors.size(), SIZE_MAX);
    for (size_t l = 0; l < layers.size(); ++l)
        for (size_t t : layers[l].tensors)
            if (t < layer_of_entry.size()) layer_of_entry[t] = l;
    std::vector<size_t> layer_of_tensor(tensors.size(), SIZE_MAX);
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].index < layer_of_entry.size()) layer_of_tensor[i] = layer_of_entry[tensors[i].index];

    std::vector<size_t> listed;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const LogicalTensor& lt = tensors[i];
        if (lt.index >= model.tensors.size()) continue;
        const TensorInfo& t = model.tensors[lt.index];
        if (query.layer && layer_of_tensor[i] != *query.layer) continue;
        if (pattern) {
            std::string_view name(t.name);
            name = name.substr(0, std::min(name.size(), kRegexNameBytes));
            bool match = false;
            try {
                match = std::regex_search(name.begin(), name.end(), *pattern);
            } catch (const std::regex_error& e) {
                return Error{ErrorCode::E_ARGS, "", std::nullopt, escape_for_display(e.what(), 200)};
            }
            if (!match) continue;
        } else if (!query.text.empty() && !contains_folded(t.name, query.text)) {
            continue;
        }
        listed.push_back(i);
        add(out.totals, lt);
        if (layer_of_tensor[i] != SIZE_MAX) add(out.layer_totals[layer_of_tensor[i]], lt);
    }
    if (query.sort != TensorColumn::file_order) {
        std::stable_sort(listed.begin(), listed.end(), [&](size_t a, size_t b) {
            const LogicalTensor& x = tensors[a];
            const LogicalTensor& y = tensors[b];
            return query.descending ? less_by(model, query.sort, y, x) : less_by(model, query.sort, x, y);
        });
    } else if (query.descending) {
        std::reverse(listed.begin(), listed.end());
    }
    if (!query.by_layer) {
        for (size_t i : listed) out.rows.push_back({false, i});
        return out;
    }
    std::vector<std::vector<size_t>> per_layer(layers.size());
    for (size_t i : listed)
        if (layer_of_tensor[i] != SIZE_MAX) per_layer[layer_of_tensor[i]].push_back(i);
    for (size_t l = 0; l < layers.size(); ++l) {
        if (per_layer[l].empty()) continue;
        out.rows.push_back({true, l});
        if (query.collapsed.count(l)) continue;
        for (size_t i : per_layer[l]) out.rows.push_back({false, i});
    }
    return out;
}

}  // namespace mlens
