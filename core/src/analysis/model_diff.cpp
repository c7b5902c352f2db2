#include "mlens/analysis/model_diff.h"

#include <map>

#include "mlens/model/enum_names.h"
#include "mlens/model/shape_text.h"
#include "mlens/model/value_format.h"

namespace mlens {

namespace {

bool values_equal(const Value& x, const Value& y) {
    if (x.type != y.type) return false;
    if (x.is_string()) return x.string_length() == y.string_length() && x.string_value() == y.string_value();
    if (!x.is_array()) return x.scalar.bits == y.scalar.bits;
    if (!x.array || !y.array) return x.array == y.array;
    const ArrayIndex &p = *x.array, &q = *y.array;
    if (p.element_type != q.element_type || p.count != q.count) return false;
    for (uint64_t i = 0; i < p.count; ++i) {
        if (p.element_type == ValueType::string) {
            if (p.string_length_at(i) != q.string_length_at(i) || p.string_at(i) != q.string_at(i)) return false;
        } else if (p.element_type != ValueType::array && p.scalar_at(i).bits != q.scalar_at(i).bits) {
            return false;
        }
    }
    return true;
}

void set_types(const Value& v, std::optional<ValueType>& type, std::optional<ValueType>& element) {
    type = v.type;
    if (v.is_array()) element = v.array->element_type;
}

std::string enum_name_of(const MetadataEntry& e) {
    if (e.value.is_string() || e.value.is_array()) return {};
    return enum_value_name(e.key, e.value.scalar).value_or("");
}

void diff_metadata(const Model& a, const Model& b, ModelDiff& d) {
    std::map<std::string, const MetadataEntry*> in_b;
    for (const MetadataEntry& e : b.metadata) in_b.emplace(e.key, &e);
    std::map<std::string, bool> seen;
    for (const MetadataEntry& e : a.metadata) {
        if (!seen.emplace(e.key, true).second) continue;
        auto it = in_b.find(e.key);
        MetadataChange c;
        c.key = e.key;
        c.type_a = format_type(e.value);
        c.value_a = format_value(e.value);
        c.name_a = enum_name_of(e);
        set_types(e.value, c.value_type_a, c.element_type_a);
        if (it == in_b.end()) {
            c.kind = MetadataChangeKind::removed;
        } else if (values_equal(e.value, it->second->value)) {
            continue;
        } else {
            c.kind = MetadataChangeKind::changed;
            c.type_b = format_type(it->second->value);
            c.value_b = format_value(it->second->value);
            c.name_b = enum_name_of(*it->second);
            set_types(it->second->value, c.value_type_b, c.element_type_b);
        }
        d.metadata.push_back(std::move(c));
    }
    for (const MetadataEntry& e : b.metadata)
        if (!seen.count(e.key) && seen.emplace(e.key, true).second) {
            MetadataChange c;
            c.kind = MetadataChangeKind::added;
            c.key = e.key;
            c.type_b = format_type(e.value);
            c.value_b = format_value(e.value);
            set_types(e.value, c.value_type_b, c.element_type_b);
            c.name_b = enum_name_of(e);
            d.metadata.push_back(std::move(c));
        }
}

// Type and logical shape of a side as its view reports them (falling back to the stored ones).
void describe_side(const Model& m, const PairSide& side, std::string& type, std::vector<uint64_t>& shape) {
    auto s = PairSource::open(m, side);
    if (s) {
        type = s.value()->view().type_name();
        shape = s.value()->view().shape();
    } else {
        type = m.tensors[side.tensor].type.name;
        shape = m.tensors[side.tensor].ne;
    }
}

// Name, type and shape of a tensor that only one model holds, taken whole.
void describe_whole_tensor(const Model& m, size_t tensor, std::string& name, std::string& type, std::vector<uint64_t>& shape) {
    name = m.tensors[tensor].name;
    PairSide side;
    side.tensor = tensor;
    describe_side(m, side, type, shape);
}

}  // namespace

const char* metadata_change_name(MetadataChangeKind kind) {
    return kind == MetadataChangeKind::added ? "added" : kind == MetadataChangeKind::removed ? "removed" : "changed";
}

const char* metadata_change_mark(MetadataChangeKind kind) {
    return kind == MetadataChangeKind::added ? "+" : kind == MetadataChangeKind::removed ? "-" : "~";
}

std::vector<std::string> tensor_change_names(const TensorChange& c) {
    std::vector<std::string> names;
    if (c.added) names.push_back("added");
    if (c.removed) names.push_back("removed");
    if (c.renamed) names.push_back("renamed");
    if (c.retyped) names.push_back("retyped");
    if (c.reshaped) names.push_back("reshaped");
    if (c.values_differ) names.push_back("values");
    return names;
}

std::string metadata_side_text(const MetadataChange& c, DiffSide side) {
    const bool a = side == DiffSide::a;
    const std::string& type = a ? c.type_a : c.type_b;
    const std::string& value = a ? c.value_a : c.value_b;
    const std::string& name = a ? c.name_a : c.name_b;
    if (type.empty()) return {};
    return type + " " + value + (name.empty() ? std::string() : " (" + name + ")");
}

std::string tensor_type_text(const TensorChange& c) {
    if (c.type_a == c.type_b || c.type_b.empty()) return c.type_a;
    if (c.type_a.empty()) return c.type_b;
    return c.type_a + "\xE2\x86\x92" + c.type_b;
}

std::string tensor_shape_text(const TensorChange& c) {
    const std::string a = shape_text(c.shape_a, ShapeStyle::bracketed, ShapeOrder::fastest_first),
                      b = shape_text(c.shape_b, ShapeStyle::bracketed, ShapeOrder::fastest_first);
    if (a == b || c.added) return b;
    if (c.removed) return a;
    return a + "\xE2\x86\x92" + b;
}

std::map<std::string, std::string> renamed_pairs(const ModelDiff& diff) {
    std::map<std::string, std::string> out;
    for (const TensorChange& c : diff.tensors)
        if (c.renamed && !c.name_a.empty() && !c.name_b.empty()) out.emplace(c.name_b, c.name_a);
    return out;
}

Result<ModelDiff> diff_models(const Model& a, const Model& b, const DiffOptions& options, JobContext* job) {
    ModelDiff d;
    diff_metadata(a, b, d);
    NameMap map = options.name_map;
    MapSide side = options.map_side;
    if (!map && options.auto_hf_map)
        if (std::optional<NameAlignment> aligned = automatic_name_alignment(a, b)) {
            map = aligned->map;
            side = aligned->side;
            d.name_map = aligned->label;
        }
    const Pairing pairing = pair_tensors(a, b, map, side);
    std::optional<ModelError> numeric;
    if (options.numeric) {
        auto r = compare_models(a, b, pairing, job, options.threads);
        if (!r) return r.error();
        numeric = std::move(*r);
        d.layers = numeric->layers;
    }
    for (size_t i = 0; i < pairing.pairs.size(); ++i) {
        const TensorPair& p = pairing.pairs[i];
        TensorChange c;
        c.renamed = p.renamed;
        describe_side(a, p.a, c.type_a, c.shape_a);
        describe_side(b, p.b, c.type_b, c.shape_b);
        c.retyped = c.type_a != c.type_b;
        c.reshaped = c.shape_a != c.shape_b;
        if (numeric) {
            const TensorError& e = numeric->tensors[i];
            c.name_a = e.name_a;
            c.name_b = e.name_b;
            c.error = e.error;
            c.failed = e.failed;
            c.read_error = e.read_error;
            c.read_error_path = e.read_error_path;
            c.values_differ = !e.failed.empty() || (e.error && e.error->max_abs > 0);
        } else {
            c.name_a = slice_label(a.tensors[p.a.tensor].name, p.a.slice);
            c.name_b = slice_label(b.tensors[p.b.tensor].name, p.b.slice);
        }
        if (c.renamed || c.retyped || c.reshaped || c.values_differ) d.tensors.push_back(std::move(c));
    }
    for (size_t i : pairing.only_a) {
        TensorChange c;
        c.removed = true;
        describe_whole_tensor(a, i, c.name_a, c.type_a, c.shape_a);
        d.tensors.push_back(std::move(c));
    }
    for (size_t j : pairing.only_b) {
        TensorChange c;
        c.added = true;
        describe_whole_tensor(b, j, c.name_b, c.type_b, c.shape_b);
        d.tensors.push_back(std::move(c));
    }
    return d;
}

}  // namespace mlens
