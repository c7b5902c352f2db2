#include "mlens/formats/llama_asserts.h"

#include <algorithm>
#include <string_view>

#include "mlens/formats/llama_requirements.h"

namespace mlens {

namespace {

constexpr int64_t kMaxLayers = 512;  // LLAMA_MAX_LAYERS
constexpr int64_t kMaxExperts = 1024;  // LLAMA_MAX_EXPERTS

constexpr const char* kSameHeadSize = "GGML_ASSERT(n_embd_head == hparams.n_embd_head_k())";
constexpr const char* kFullRope = "GGML_ASSERT(n_embd_head == n_rot)";
// load_hparams refuses a rope dimension other than the head size for these before any graph is
// built ("invalid n_rot"), so their graph's n_rot assert is never reached.
constexpr std::string_view kRotCheckedArchs[] = {"llama", "deci", "falcon", "llama-embed"};

bool rot_checked_first(const std::string& arch) {
    return std::find(std::begin(kRotCheckedArchs), std::end(kRotCheckedArchs), arch) != std::end(kRotCheckedArchs);
}

// The head sizes load_hparams derives: key_length / value_length, else n_embd / n_head.
std::optional<int64_t> head_size(const LlamaHparams& h, const std::optional<int64_t>& length) {
    if (length) return length;
    if (h.n_embd && h.n_head && *h.n_head > 0) return *h.n_embd / *h.n_head;
    return std::nullopt;
}

bool eps_trips(const std::optional<double>& eps) { return eps && !(*eps >= 0.0); }

// clang-format off
constexpr LlamaAssert kRows[] = {
    {{"block_count", nullptr}, "GGML_ASSERT(hparams.n_layer_all > 0 && hparams.n_layer_all <= LLAMA_MAX_LAYERS)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) { return h.n_layer && (*h.n_layer <= 0 || *h.n_layer > kMaxLayers); }},
    {{"nextn_predict_layers", "block_count"}, "GGML_ASSERT(hparams.n_layer_nextn <= hparams.n_layer_all)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) { return h.n_layer && h.n_layer_nextn > *h.n_layer; }},
    {{"expert_count", nullptr}, "GGML_ASSERT(hparams.n_expert <= LLAMA_MAX_EXPERTS)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) { return h.n_expert > kMaxExperts; }},
    {{"expert_used_count", "expert_count"}, "GGML_ASSERT(n_expert_used_max <= hparams.n_expert)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) { return h.n_expert <= kMaxExperts && h.n_expert_used_max > h.n_expert; }},
    {{"expert_count", "expert_used_count"}, "GGML_ASSERT(n_expert_used_max > 0)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) { return h.n_expert > 0 && h.n_expert <= kMaxExperts && h.n_expert_used_max <= 0; }},
    {{"expert_group_count", "expert_count"}, "GGML_ASSERT(hparams.n_expert_groups < hparams.n_expert)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) {
         return h.n_expert > 0 && h.n_expert <= kMaxExperts && h.n_expert_used_max > 0 && h.n_expert_used_max <= h.n_expert &&
             h.n_expert_groups >= h.n_expert;
     }},
    {{"expert_group_count", "expert_count"}, "GGML_ASSERT(hparams.n_expert % hparams.n_expert_groups == 0)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) {
         return h.n_expert > 0 && h.n_expert_groups > 1 && h.n_expert_groups < h.n_expert && h.n_expert % h.n_expert_groups != 0;
     }},
    {{"expert_group_used_count", "expert_group_count"}, "GGML_ASSERT(hparams.n_group_used > 0)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) {
         return h.n_expert > 0 && h.n_expert_groups > 1 && h.n_expert_groups < h.n_expert && h.n_expert % h.n_expert_groups == 0 &&
             h.n_group_used <= 0;
     }},
    {{"expert_group_used_count", "expert_group_count"}, "GGML_ASSERT(hparams.n_group_used < hparams.n_expert_groups)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) {
         return h.n_expert > 0 && h.n_expert_groups > 1 && h.n_expert_groups < h.n_expert && h.n_expert % h.n_expert_groups == 0 &&
             h.n_group_used >= h.n_expert_groups;
     }},
    {{"expert_group_count", nullptr}, "GGML_ASSERT(hparams.n_expert_groups == 0)",
     "llama_model_base::load_hparams", "",
     [](const LlamaHparams& h) { return h.n_expert == 0 && h.n_expert_used_max == 0 && h.n_expert_groups != 0; }},
    {{"rope.scaling.type", nullptr}, "GGML_ASSERT(hparams.rope_scaling_type_train != LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED)",
     "llama_model_base::load_hparams", "none, linear, yarn and longrope are known",
     [](const LlamaHparams& h) {
         return h.rope_scaling && *h.rope_scaling != "none" && *h.rope_scaling != "linear" && *h.rope_scaling != "yarn" &&
             *h.rope_scaling != "longrope";
     }},
    {{"attention.layer_norm_rms_epsilon", nullptr}, "GGML_ASSERT(eps >= 0.0f)",
     "ggml_compute_forward_rms_norm", "",
     [](const LlamaHparams& h) { return eps_trips(h.rms_eps); }},
    {{"attention.layer_norm_epsilon", nullptr}, "GGML_ASSERT(eps >= 0.0f)",
     "ggml_compute_forward_norm,", "",
     [](const LlamaHparams& h) { return eps_trips(h.norm_eps); }},
    {{"attention.head_count_kv", "attention.head_count"}, "GGML_ASSERT(ggml_can_mul_mat(a, b))",
     "ggml_mul_mat", "of K and Q in the attention: the KV heads must divide the heads",
     [](const LlamaHparams& h) { return h.n_head && h.n_head_kv && *h.n_head > 0 && *h.n_head_kv > 0 && *h.n_head % *h.n_head_kv != 0; }},
    {{"attention.value_length", "attention.key_length"}, kSameHeadSize, nullptr, "the graph builder, at the first decode",
     [](const LlamaHparams& h) {
         auto k = head_size(h, h.key_length), v = head_size(h, h.value_length);
         return graph_assert_file(kSameHeadSize, h.arch) && k && v && *k != *v;
     }},
    {{"rope.dimension_count", "attention.value_length"}, kFullRope, nullptr, "the graph builder, at the first decode",
     [](const LlamaHparams& h) {
         auto v = head_size(h, h.value_length);
         return graph_assert_file(kFullRope, h.arch) && !rot_checked_first(h.arch) && h.n_rot && v && *h.n_rot != *v;
     }},
};
// clang-format on

const MetadataEntry* arch_entry(const Model& m, const std::string& arch, const char* suffix) { return m.find(arch + "." + suffix); }

// A scalar value of `arch`.`suffix`; nullopt when absent, an array or a string.
const MetadataEntry* scalar_entry(const Model& m, const std::string& arch, const char* suffix) {
    const MetadataEntry* e = arch_entry(m, arch, suffix);
    return e && !e->value.is_array() && !e->value.is_string() ? e : nullptr;
}

std::optional<int64_t> int_of(const Model& m, const std::string& arch, const char* suffix) {
    const MetadataEntry* e = scalar_entry(m, arch, suffix);
    return e ? std::optional<int64_t>(e->value.scalar.as_int()) : std::nullopt;
}

std::optional<double> double_of(const Model& m, const std::string& arch, const char* suffix) {
    const MetadataEntry* e = scalar_entry(m, arch, suffix);
    return e ? std::optional<double>(e->value.scalar.as_double()) : std::nullopt;
}

// expert_used_count is a scalar or one value per layer (get_key_or_arr): its largest value.
int64_t expert_used_max(const Model& m, const std::string& arch) {
    const MetadataEntry* e = arch_entry(m, arch, "expert_used_count");
    if (!e || e->value.is_string()) return 0;
    if (!e->value.is_array()) return e->value.scalar.as_int();
    const ArrayIndex& a = *e->value.array;
    if (a.element_type == ValueType::string || a.element_type == ValueType::array) return 0;
    int64_t most = 0;
    for (uint64_t i = 0; i < std::min<uint64_t>(a.count, kMaxLayers); ++i) most = std::max(most, a.scalar_at(i).as_int());
    return most;
}

std::string value_text(const MetadataEntry& e) {
    if (e.value.is_string()) return "\"" + e.value.string_value(64) + "\"";
    if (e.value.is_array()) return "[" + std::to_string(e.value.array->count) + " values]";
    return e.value.scalar.to_string();
}

}  // namespace

LlamaHparams llama_hparams_of(const Model& m) {
    LlamaHparams h;
    const MetadataEntry* arch = m.find("general.architecture");
    if (!arch || !arch->value.is_string()) return h;
    h.arch = arch->value.string_value(256);
    const std::string& a = h.arch;
    h.n_layer = int_of(m, a, "block_count");
    h.n_layer_nextn = int_of(m, a, "nextn_predict_layers").value_or(0);
    h.n_expert = int_of(m, a, "expert_count").value_or(0);
    h.n_expert_used_max = expert_used_max(m, a);
    h.n_expert_groups = int_of(m, a, "expert_group_count").value_or(0);
    h.n_group_used = int_of(m, a, "expert_group_used_count").value_or(0);
    h.n_embd = int_of(m, a, "embedding_length");
    h.n_head = int_of(m, a, "attention.head_count");
    h.n_head_kv = int_of(m, a, "attention.head_count_kv");
    h.key_length = int_of(m, a, "attention.key_length");
    h.value_length = int_of(m, a, "attention.value_length");
    h.n_rot = int_of(m, a, "rope.dimension_count");
    h.rms_eps = double_of(m, a, "attention.layer_norm_rms_epsilon");
    h.norm_eps = double_of(m, a, "attention.layer_norm_epsilon");
    if (const MetadataEntry* e = arch_entry(m, a, "rope.scaling.type"); e && e->value.is_string()) h.rope_scaling = e->value.string_value(256);
    return h;
}

std::span<const LlamaAssert> llama_asserts() { return kRows; }

std::string llama_assert_where(const LlamaAssert& row, const std::string& arch) {
    std::string where;
    if (!row.function) {
        const char* file = graph_assert_file(row.assert_text, arch);
        where = file ? file : "the " + arch + " graph builder";
    } else if (const LlamaAssertSite* site = find_llama_assert_site(row.assert_text, row.function)) {
        where = site->where;
    } else {
        where = row.function;  // the linked source moved it: name the function at least
    }
    return row.note[0] ? where + " (" + row.note + ")" : where;
}

void check_llama_asserts(Model& m) {
    const LlamaHparams h = llama_hparams_of(m);
    if (h.arch.empty()) return;
    for (const LlamaAssert& row : kRows) {
        if (!row.trips(h)) continue;
        const MetadataEntry* at = nullptr;
        std::string values;
        for (const char* suffix : row.keys) {
            if (!suffix) continue;
            const MetadataEntry* e = arch_entry(m, h.arch, suffix);
            values += (values.empty() ? "" : ", ") + h.arch + "." + suffix + " = " + (e ? value_text(*e) : std::string("absent"));
            if (!at) at = e;
        }
        if (!at) continue;  // only defaults trip it: nothing in the file to point at
        m.diagnostics.push_back({Severity::warning, "GGUF", ErrorCode::W_LLAMA_ABORT, at->key, at->key_range.offset,
                                 values + ": the pinned llama.cpp aborts on " + row.assert_text + " at " + llama_assert_where(row, h.arch), at->file});
    }
}

}  // namespace mlens
