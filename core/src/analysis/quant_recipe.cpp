#include "mlens/analysis/quant_recipe.h"

#include <ggml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "mlens/formats/ggml_type_table.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/model/logical_tensors.h"
#include "mlens/model/metadata_text.h"
#include "mlens/model/summary.h"

namespace mlens {

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string regex_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
    return out;
}

std::string alternation(const std::vector<std::string>& parts) {
    if (parts.size() == 1) return parts[0];
    std::string s = "(";
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? "|" : "") + parts[i];
    return s + ")";
}

// The first llama-quantize ftype name whose tensors are of type `base`; "" when no ftype
// produces it.
std::string llama_quantize_ftype(const std::string& base) {
    const std::optional<uint32_t> id = ggml_type_from_name(base);
    const GgmlTypeRow* row = id ? ggml_type_row(*id) : nullptr;
    return row ? std::string(row->first_ftype()) : std::string();
}

bool is_provenance_key(const std::string& key) {
    return key == "general.quantized_by" || key == "general.file_type" || key == "general.quantization_version" ||
        key.starts_with("quantize.");
}

// Whether a GGUF tensor's type is a block-quantized ggml type.
bool quantized(const Model& model, const TensorInfo& t) {
    return model.format == Format::gguf && t.type.known && !t.quant && t.type.id < GGML_TYPE_COUNT &&
        ggml_is_quantized(static_cast<ggml_type>(t.type.id));
}

// Whether llama-quantize's choice for a cell must be stated: quantized types and F16/BF16 kept on
// purpose; F32 is taken as the source's own type.
bool needs_statement(const Model& model, const RecipeCell& c) {
    if (c.dims < 2) return false;
    const TensorInfo& t = model.tensors[c.tensor_index];
    return quantized(model, t) || (model.format == Format::gguf && (t.type.name == "F16" || t.type.name == "BF16"));
}

// Why a model without block-quantized tensors has no command: its per-tensor quantization modes
// (MLX, Ollama tensor blobs) with their counts, in first-seen order, or that nothing is quantized.
std::string per_tensor_modes(const Model& model, const std::vector<const RecipeCell*>& all) {
    std::vector<std::pair<std::string, size_t>> modes;
    for (const RecipeCell* c : all) {
        if (!model.tensors[c->tensor_index].quant) continue;
        auto it = std::find_if(modes.begin(), modes.end(), [&](const auto& p) { return p.first == c->type; });
        if (it == modes.end())
            modes.push_back({c->type, 1});
        else
            ++it->second;
    }
    if (modes.empty()) return "no quantized tensors of two or more dimensions";
    std::string list;
    for (const auto& [mode, n] : modes) list += (list.empty() ? "" : ", ") + mode + " ×" + std::to_string(n);
    return "quantized per tensor (" + list + "), which llama-quantize does not make";
}

void choose_base(const Model& model, QuantRecipe& r, const std::vector<const RecipeCell*>& all) {
    std::vector<std::pair<std::string, size_t>> counts;  // first-seen order
    for (const RecipeCell* c : all) {
        if (c->dims < 2 || !quantized(model, model.tensors[c->tensor_index])) continue;
        auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == c->type; });
        if (it == counts.end())
            counts.push_back({c->type, 1});
        else
            ++it->second;
    }
    // A GGUF with nothing block-quantized is still llama-quantize's work when its matrices are
    // F16, BF16 or F32: those ftypes make exactly that.
    if (counts.empty() && model.format == Format::gguf) {
        for (const RecipeCell* c : all) {
            const std::string& type = model.tensors[c->tensor_index].type.name;
            if (c->dims < 2 || (type != "F16" && type != "BF16" && type != "F32")) continue;
            auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == type; });
            if (it == counts.end())
                counts.push_back({type, 1});
            else
                ++it->second;
        }
    }
    if (counts.empty()) {
        r.no_command = per_tensor_modes(model, all);
        return;
    }
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it)
        if (it->second > best->second) best = it;
    r.base = best->first;
    r.ftype = llama_quantize_ftype(r.base);
    if (r.ftype.empty())
        r.no_command = "no llama-quantize ftype makes " + r.base + " tensors: the linked llama-quantize cannot reproduce this file";
}

void make_rules(const Model& model, QuantRecipe& r) {
    // (type, layers) -> kinds for layer-listing rules; type -> kinds for catch-alls.
    std::map<std::pair<std::string, std::vector<uint32_t>>, std::vector<std::string>> listed;
    std::map<std::string, std::vector<std::string>> catch_all;
    std::vector<std::pair<std::string, std::vector<uint32_t>>> listed_order;
    std::vector<std::string> catch_order;
    for (size_t k = 0; k < r.kinds.size(); ++k) {
        std::vector<std::pair<std::string, std::vector<uint32_t>>> by_type;  // first-seen order
        for (const RecipeLayerRow& row : r.layers) {
            const auto& cell = row.cells[k];
            if (!cell || !needs_statement(model, *cell)) continue;
            auto it = std::find_if(by_type.begin(), by_type.end(), [&](const auto& p) { return p.first == cell->type; });
            if (it == by_type.end())
                by_type.push_back({cell->type, {row.layer}});
            else
                it->second.push_back(row.layer);
        }
        if (by_type.empty()) continue;
        // The type most layers have; on a tie BASE, which needs no catch-all rule.
        auto most = by_type.begin();
        for (auto it = by_type.begin(); it != by_type.end(); ++it)
            if (it->second.size() > most->second.size() || (it->second.size() == most->second.size() && it->first == r.base)) most = it;
        const std::string kind = regex_escape(lower(r.kinds[k]));
        for (auto it = by_type.begin(); it != by_type.end(); ++it) {
            if (it == most) continue;
            auto key = std::make_pair(it->first, it->second);
            if (!listed.count(key)) listed_order.push_back(key);
            listed[key].push_back(kind);
        }
        if (most->first != r.base) {
            if (!catch_all.count(most->first)) catch_order.push_back(most->first);
            catch_all[most->first].push_back(kind);
        }
    }
    for (const auto& key : listed_order) {
        std::vector<std::string> layers;
        for (uint32_t l : key.second) layers.push_back(std::to_string(l));
        r.rules.push_back("^blk\\." + alternation(layers) + "\\." + alternation(listed[key]) + "$=" + lower(key.first));
    }
    for (const std::string& type : catch_order) r.rules.push_back("^blk\\.[0-9]+\\." + alternation(catch_all[type]) + "$=" + lower(type));
    for (const RecipeCell& c : r.other) {
        if (!needs_statement(model, c) || c.type == r.base) continue;
        if (c.tensor == "token_embd.weight")
            r.token_embedding_type = lower(c.type);
        else if (c.tensor == "output.weight")
            r.output_type = lower(c.type);
        else
            r.rules.push_back("^" + regex_escape(lower(c.tensor)) + "$=" + lower(c.type));
    }
}

bool shell_safe(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("_./=-:+").find(c) == std::string_view::npos) return false;
    return true;
}

}  // namespace

QuantRecipe quant_recipe(const Model& model) {
    QuantRecipe r;
    std::map<uint32_t, RecipeLayerRow> rows;
    std::vector<const RecipeCell*> all;
    std::vector<std::pair<uint32_t, RecipeCell>> layered;
    for (const LogicalTensor& lt : logical_tensors(model)) {
        const TensorInfo& t = model.tensors[lt.index];
        RecipeCell cell{t.name, lt.index, lt.type, lt.bits_per_weight(), static_cast<uint32_t>(lt.ne.size())};
        auto layer = layer_of(t.name);
        if (!layer) {
            r.other.push_back(std::move(cell));
            continue;
        }
        const size_t dot = t.name.find('.', t.name.find_first_of("0123456789"));
        const std::string kind = dot == std::string::npos ? t.name : t.name.substr(dot + 1);
        if (std::find(r.kinds.begin(), r.kinds.end(), kind) == r.kinds.end()) r.kinds.push_back(kind);
        layered.push_back({*layer, std::move(cell)});
    }
    for (auto& [layer, cell] : layered) {
        RecipeLayerRow& row = rows[layer];
        row.layer = layer;
        row.cells.resize(r.kinds.size());
        const size_t dot = cell.tensor.find('.', cell.tensor.find_first_of("0123456789"));
        const std::string kind = dot == std::string::npos ? cell.tensor : cell.tensor.substr(dot + 1);
        const size_t k = static_cast<size_t>(std::find(r.kinds.begin(), r.kinds.end(), kind) - r.kinds.begin());
        row.cells[k] = std::move(cell);
    }
    for (auto& [layer, row] : rows) r.layers.push_back(std::move(row));
    for (const RecipeLayerRow& row : r.layers)
        for (const auto& c : row.cells)
            if (c) all.push_back(&*c);
    for (const RecipeCell& c : r.other) all.push_back(&c);
    for (const MetadataEntry& e : model.metadata) {
        if (!is_provenance_key(e.key)) continue;
        r.provenance.push_back({e.key, metadata_value_text(e)});
        if (e.key.starts_with("quantize.imatrix.")) r.imatrix = true;
    }
    choose_base(model, r, all);
    if (!r.base.empty()) make_rules(model, r);
    const std::optional<uint64_t> recorded = model.get_uint("general.file_type");
    if (!r.ftype.empty() && recorded && file_type_name(*recorded) != r.ftype) r.file_type_override = recorded;
    return r;
}

std::vector<std::string> llama_quantize_arguments(const QuantRecipe& r, const std::string& input, const std::string& output,
                                                  const std::string& imatrix) {
    std::vector<std::string> a = {"--pure"};
    if (r.imatrix) a.insert(a.end(), {"--imatrix", imatrix});
    if (!r.token_embedding_type.empty()) a.insert(a.end(), {"--token-embedding-type", r.token_embedding_type});
    if (!r.output_type.empty()) a.insert(a.end(), {"--output-tensor-type", r.output_type});
    for (const std::string& rule : r.rules) a.insert(a.end(), {"--tensor-type", rule});
    if (r.file_type_override) a.insert(a.end(), {"--override-kv", "general.file_type=int:" + std::to_string(*r.file_type_override)});
    a.insert(a.end(), {input, output, r.ftype});
    return a;
}

std::string llama_quantize_command(const QuantRecipe& r, const std::string& input, const std::string& output) {
    if (r.ftype.empty()) return {};
    std::string line = "llama-quantize";
    for (const std::string& arg : llama_quantize_arguments(r, input, output)) {
        line += ' ';
        if (shell_safe(arg)) {
            line += arg;
            continue;
        }
        line += '\'';
        for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += '\'';
    }
    return line;
}

std::vector<RecipeChange> recipe_difference(const QuantRecipe& a, const QuantRecipe& b, const std::map<std::string, std::string>& b_to_a) {
    auto types = [](const QuantRecipe& r) {
        std::vector<std::pair<std::string, std::string>> out;
        for (const RecipeLayerRow& row : r.layers)
            for (const auto& c : row.cells)
                if (c) out.push_back({c->tensor, c->type});
        for (const RecipeCell& c : r.other) out.push_back({c.tensor, c.type});
        return out;
    };
    const auto ta = types(a);
    auto tb = types(b);
    for (auto& [name, type] : tb)
        if (auto renamed = b_to_a.find(name); renamed != b_to_a.end()) name = renamed->second;
    std::map<std::string, std::string> in_b(tb.begin(), tb.end());
    std::set<std::string> in_a;
    std::vector<RecipeChange> changes;
    for (const auto& [name, type] : ta) {
        in_a.insert(name);
        auto it = in_b.find(name);
        if (it == in_b.end())
            changes.push_back({name, type, ""});
        else if (it->second != type)
            changes.push_back({name, type, it->second});
    }
    for (const auto& [name, type] : tb)
        if (!in_a.count(name)) changes.push_back({name, "", type});
    return changes;
}

std::vector<RecipeChangeGroup> group_recipe_changes(const std::vector<RecipeChange>& changes) {
    std::vector<RecipeChangeGroup> groups;
    std::map<std::tuple<std::string, std::string, std::string>, size_t> index;  // (kind, from, to) → group
    for (const RecipeChange& c : changes) {
        const std::optional<uint32_t> layer = layer_of(std::string_view(c.tensor));
        std::string kind = c.tensor;
        if (layer) {
            const size_t dot = c.tensor.find('.', c.tensor.find_first_of("0123456789"));
            if (dot != std::string::npos) kind = c.tensor.substr(dot + 1);
        }
        auto [it, added] = index.try_emplace({kind, c.from, c.to}, groups.size());
        if (added) groups.push_back({kind, c.from, c.to, {}});
        if (layer) groups[it->second].layers.push_back(*layer);
    }
    return groups;
}

std::string recipe_group_layers_text(const RecipeChangeGroup& group) {
    std::string text;
    for (uint32_t l : group.layers) text += (text.empty() ? "layers " : ", ") + std::to_string(l);
    return text;
}

std::vector<RecipeRun> recipe_runs(const QuantRecipe& recipe) {
    std::vector<RecipeRun> runs;
    for (size_t k = 0; k < recipe.kinds.size(); ++k) {
        std::optional<RecipeRun> open;
        for (const RecipeLayerRow& row : recipe.layers) {
            const std::optional<RecipeCell>& cell = k < row.cells.size() ? row.cells[k] : std::nullopt;
            const bool continues = open && cell && row.layer == open->last_layer + 1 && cell->type == open->type &&
                cell->bits_per_weight == open->bits_per_weight;
            if (continues) {
                open->last_layer = row.layer;
                continue;
            }
            if (open) runs.push_back(std::move(*open));
            open.reset();
            if (cell) open = RecipeRun{recipe.kinds[k], row.layer, row.layer, cell->type, cell->bits_per_weight};
        }
        if (open) runs.push_back(std::move(*open));
    }
    return runs;
}

std::string short_kind(std::string_view kind) {
    constexpr std::string_view kWeight = ".weight";
    if (kind.size() > kWeight.size() && kind.substr(kind.size() - kWeight.size()) == kWeight) kind.remove_suffix(kWeight.size());
    return std::string(kind);
}

}  // namespace mlens
