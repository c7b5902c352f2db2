#include "mlens/model/summary.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "mlens/model/truncation.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

uint64_t saturating_add(uint64_t a, uint64_t b, bool& overflow) {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        overflow = true;
        return UINT64_MAX;
    }
    return r;
}

}  // namespace

std::string file_type_name(uint64_t ftype) {
    static const char* const kNames[] = {
        "F32",      "F16",      "Q4_0",     "Q4_1",   "Q4_1_SOME_F16", "Q4_2",      "Q4_3",   "Q8_0",  "Q5_0",    "Q5_1",   "Q2_K",
        "Q3_K_S",   "Q3_K_M",   "Q3_K_L",   "Q4_K_S", "Q4_K_M",        "Q5_K_S",    "Q5_K_M", "Q6_K",  "IQ2_XXS", "IQ2_XS", "Q2_K_S",
        "IQ3_XS",   "IQ3_XXS",  "IQ1_S",    "IQ4_NL", "IQ3_S",         "IQ3_M",     "IQ2_S",  "IQ2_M", "IQ4_XS",  "IQ1_M",  "BF16",
        "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",  "TQ2_0",         "MXFP4_MOE", "NVFP4",  "Q1_0",  "Q2_0"};
    if (ftype < std::size(kNames)) return kNames[ftype];
    if (ftype == 1024) return "GUESSED";
    return "unknown(" + std::to_string(ftype) + ")";
}

std::optional<uint32_t> layer_of(std::string_view name) {
    for (std::string_view prefix : {"blk.", "model.layers.", "layers.", "model.language_model.layers."}) {
        if (!name.starts_with(prefix)) continue;
        std::string_view rest = name.substr(prefix.size());
        uint32_t n = 0;
        auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
        if (ec == std::errc() && ptr != rest.data() && (ptr == rest.data() + rest.size() || *ptr == '.')) return n;
    }
    return std::nullopt;
}

namespace {

// config.json files beyond this are not parsed for the architecture.
constexpr uint64_t kMaxConfigJsonBytes = 4u << 20;

struct Architecture {
    std::string name;
    std::string source;
};

nlohmann::json config_json(const Model& model) {
    const MetadataEntry* e = model.find("file:config.json");
    if (!e || !e->value.is_string() || e->value.string_length() > kMaxConfigJsonBytes) return {};
    return nlohmann::json::parse(e->value.string_value(kMaxConfigJsonBytes), nullptr, false);
}

std::string first_architectures_entry(const nlohmann::json& config) {
    if (auto a = config.find("architectures"); a != config.end() && a->is_array() && !a->empty() && a->front().is_string())
        return a->front().get<std::string>();
    return {};
}

// What config.json names: model_type (top level, then text_config), else architectures[0].
Architecture config_json_architecture(const Model& model) {
    auto config = config_json(model);
    if (!config.is_object()) return {};
    auto text = [](const nlohmann::json& j, const char* key) -> std::string {
        auto it = j.find(key);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (std::string t = text(config, "model_type"); !t.empty()) return {t, "config.json model_type"};
    if (auto tc = config.find("text_config"); tc != config.end() && tc->is_object())
        if (std::string t = text(*tc, "model_type"); !t.empty()) return {t, "config.json text_config.model_type"};
    if (std::string t = first_architectures_entry(config); !t.empty()) return {t, "config.json architectures"};
    return {};
}

}  // namespace

std::string hf_architecture_class(const Model& model) {
    auto config = config_json(model);
    return config.is_object() ? first_architectures_entry(config) : std::string();
}

ModelSummary summarize(const Model& model, const std::vector<LogicalTensor>& tensors) {
    ModelSummary s;
    s.format = model.format;
    s.version = model.gguf_version();
    if (auto arch = model.get_string("general.architecture")) {
        s.architecture = *arch;
        s.architecture_source = "general.architecture";
    } else {
        Architecture a = config_json_architecture(model);
        s.architecture = std::move(a.name);
        s.architecture_source = std::move(a.source);
    }
    s.name = model.get_string("general.name").value_or("");
    s.file_type = model.get_uint("general.file_type");
    if (s.file_type) s.file_type_name = file_type_name(*s.file_type);
    s.tensor_count = tensors.size();
    s.stored_tensor_count = model.tensors.size();
    for (const LogicalTensor& t : tensors) {
        s.parameters = saturating_add(s.parameters, t.elements, s.totals_overflow);
        s.tensor_bytes = saturating_add(s.tensor_bytes, t.bytes.value_or(0), s.totals_overflow);
    }
    s.file_bytes = model.total_file_bytes();
    s.files = static_cast<uint32_t>(model.files.size());
    s.missing_files = static_cast<uint32_t>(model.missing_files().size());
    if (s.missing_files > 0) s.declared_tensor_count = model.get_uint("split.tensors.count");
    if (s.parameters > 0 && !s.totals_overflow)
        s.bits_per_weight = static_cast<double>(s.tensor_bytes) * 8.0 / static_cast<double>(s.parameters);
    s.errors = listed_error_count(model);
    s.warnings = model.warning_count();
    return s;
}

ModelSummary summarize(const Model& model) { return summarize(model, logical_tensors(model)); }

std::string ModelSummary::present_files_text() const {
    if (missing_files == 0) return "";
    return " in the " + std::to_string(files - missing_files) + " of " + std::to_string(files) + " files present";
}

std::string ModelSummary::tensors_text() const {
    return std::to_string(tensor_count) + (declared_tensor_count ? " of " + std::to_string(*declared_tensor_count) : "") +
        present_files_text() +
        (stored_tensor_count == tensor_count
             ? ""
             : " (stored as " + std::to_string(stored_tensor_count) + " entries with their scales and biases)");
}

std::vector<LayerSummary> summarize_layers(const Model& model, const std::vector<LogicalTensor>& tensors) {
    std::map<uint32_t, LayerSummary> blocks;
    LayerSummary other;
    for (const LogicalTensor& t : tensors) {
        auto layer = layer_of(model.tensors[t.index].name);
        LayerSummary& ls = layer ? blocks[*layer] : other;
        ls.layer = layer;
        ls.tensors.push_back(t.index);
        bool ignored = false;
        ls.parameters = saturating_add(ls.parameters, t.elements, ignored);
        ls.bytes = saturating_add(ls.bytes, t.bytes.value_or(0), ignored);
        if (std::find(ls.types.begin(), ls.types.end(), t.type) == ls.types.end()) ls.types.push_back(t.type);
    }
    std::vector<LayerSummary> out;
    for (auto& [n, ls] : blocks) out.push_back(std::move(ls));
    if (!other.tensors.empty()) out.push_back(std::move(other));
    return out;
}

std::vector<LayerSummary> summarize_layers(const Model& model) { return summarize_layers(model, logical_tensors(model)); }

std::string model_line(const ModelSummary& summary) {
    const char* dot = " \xC2\xB7 ";
    std::string line = summary.architecture.empty() ? "unknown architecture" : escape_for_display(summary.architecture, 60);
    line += dot + (summary.parameters ? human_count(summary.parameters) + " parameters" : std::string("no weights"));
    if (summary.file_type) line += dot + summary.file_type_name;
    return line;
}

}  // namespace mlens
