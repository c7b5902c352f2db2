#include "mlens/formats/llama_asserts.h"

#include <algorithm>
#include <string_view>

namespace mlens {

namespace {

constexpr int64_t kMaxLayers = 512;  // LLAMA_MAX_LAYERS
constexpr int64_t kMaxExperts = 1024;  // LLAMA_MAX_EXPERTS

// Architectures whose graph builder (src/models/<arch>.cpp) asserts that the value head size is
// the key head size: every builder holding GGML_ASSERT(n_embd_head == hparams.n_embd_head_k()).
constexpr std::string_view kSameHeadSizeArchs[] = {
    "afmoe",     "apertus",     "arcee",       "arctic",       "baichuan",   "bailingmoe2", "bert",       "bitnet",   "bloom",
    "chameleon", "chatglm",     "codeshell",   "cogvlm",       "cohere2",    "cohere2moe",  "command-r",  "dbrx",     "deci",
    "deepseek",  "dflash",      "dots1",       "dream",        "eagle3",     "ernie4_5",    "eurobert",   "exaone",   "falcon",
    "glm4",      "gpt2",        "gptneox",     "granite_swa",  "granite",    "grok",        "grovemoe",   "hunyuan-moe",
    "hunyuan_vl", "hy_v3",      "internlm2",   "jais",         "jais2",      "laguna",      "llada-moe",  "llada",    "llama",
    "llama4",    "maincoder",   "mellum",      "minimax-01",   "minimax-m2", "minimax-m3",  "mistral3",   "modern-bert",
    "mpt",       "muse-glimmer", "nanbeige",   "nemotron_h_moe", "nemotron_h", "nemotron",  "neo-bert",   "olmo",     "olmo2",
    "olmoe",     "openelm",     "orion",       "paddleocr",    "phi2",       "phi3",        "plamo",      "pockettts", "qwen",
    "qwen2",     "qwen2moe",    "qwen2vl",     "qwen3",        "qwen35",     "qwen35moe",   "qwen3moe",   "qwen3next", "qwen3vl",
    "qwen3vlmoe", "qwen4exp",   "refact",      "rnd1",         "seed_oss",   "smallthinker", "smollm3",   "spark2_5", "stablelm",
    "starcoder", "starcoder2",  "t5",          "xverse",
};

// Architectures whose graph builder asserts GGML_ASSERT(n_embd_head == n_rot). llama, deci and
// falcon are left out: their load_hparams refuses a rope dimension other than the head size first.
constexpr std::string_view kFullRopeArchs[] = {
    "apertus",    "arcee",      "arctic",     "baichuan",  "chameleon", "codeshell",  "cogvlm",     "cohere2moe", "dbrx",
    "deepseek",   "dots1",      "dream",      "ernie4_5",  "exaone-moe", "exaone",    "exaone4",    "granite_swa", "granite",
    "grok",       "grovemoe",   "hunyuan-moe", "hunyuan_vl", "hy_v3",    "internlm2",  "jais2",      "llada-moe",  "llada",
    "llama4",     "maincoder",  "mellum",     "minimax-01", "minimax-m2", "mistral3",  "nemotron",   "olmo",       "olmo2",
    "olmoe",      "orion",      "paddleocr",  "plamo",     "pockettts",  "qwen2",     "qwen2moe",   "qwen2vl",    "qwen3",
    "qwen3moe",   "qwen3vl",    "qwen3vlmoe", "rnd1",      "seed_oss",   "smallthinker", "smollm3",  "starcoder2", "talkie",
    "xverse",
};

bool listed(std::span<const std::string_view> archs, const std::string& arch) {
    return std::find(archs.begin(), archs.end(), arch) != archs.end();
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
     "src/llama-model.cpp:1260 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) { return h.n_layer && (*h.n_layer <= 0 || *h.n_layer > kMaxLayers); }},
    {{"nextn_predict_layers", "block_count"}, "GGML_ASSERT(hparams.n_layer_nextn <= hparams.n_layer_all)",
     "src/llama-model.cpp:1262 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) { return h.n_layer && h.n_layer_nextn > *h.n_layer; }},
    {{"expert_count", nullptr}, "GGML_ASSERT(hparams.n_expert <= LLAMA_MAX_EXPERTS)",
     "src/llama-model.cpp:1293 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) { return h.n_expert > kMaxExperts; }},
    {{"expert_used_count", "expert_count"}, "GGML_ASSERT(n_expert_used_max <= hparams.n_expert)",
     "src/llama-model.cpp:1294 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) { return h.n_expert <= kMaxExperts && h.n_expert_used_max > h.n_expert; }},
    {{"expert_count", "expert_used_count"}, "GGML_ASSERT(n_expert_used_max > 0)",
     "src/llama-model.cpp:1296 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) { return h.n_expert > 0 && h.n_expert <= kMaxExperts && h.n_expert_used_max <= 0; }},
    {{"expert_group_count", "expert_count"}, "GGML_ASSERT(hparams.n_expert_groups < hparams.n_expert)",
     "src/llama-model.cpp:1297 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) {
         return h.n_expert > 0 && h.n_expert <= kMaxExperts && h.n_expert_used_max > 0 && h.n_expert_used_max <= h.n_expert &&
             h.n_expert_groups >= h.n_expert;
     }},
    {{"expert_group_count", "expert_count"}, "GGML_ASSERT(hparams.n_expert % hparams.n_expert_groups == 0)",
     "src/llama-model.cpp:1299 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) {
         return h.n_expert > 0 && h.n_expert_groups > 1 && h.n_expert_groups < h.n_expert && h.n_expert % h.n_expert_groups != 0;
     }},
    {{"expert_group_used_count", "expert_group_count"}, "GGML_ASSERT(hparams.n_group_used > 0)",
     "src/llama-model.cpp:1300 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) {
         return h.n_expert > 0 && h.n_expert_groups > 1 && h.n_expert_groups < h.n_expert && h.n_expert % h.n_expert_groups == 0 &&
             h.n_group_used <= 0;
     }},
    {{"expert_group_used_count", "expert_group_count"}, "GGML_ASSERT(hparams.n_group_used < hparams.n_expert_groups)",
     "src/llama-model.cpp:1301 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) {
         return h.n_expert > 0 && h.n_expert_groups > 1 && h.n_expert_groups < h.n_expert && h.n_expert % h.n_expert_groups == 0 &&
             h.n_group_used >= h.n_expert_groups;
     }},
    {{"expert_group_count", nullptr}, "GGML_ASSERT(hparams.n_expert_groups == 0)",
     "src/llama-model.cpp:1305 (llama_model_base::load_hparams)",
     [](const LlamaHparams& h) { return h.n_expert == 0 && h.n_expert_used_max == 0 && h.n_expert_groups != 0; }},
    {{"rope.scaling.type", nullptr}, "GGML_ASSERT(hparams.rope_scaling_type_train != LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED)",
     "src/llama-model.cpp:1352 (llama_model_base::load_hparams; none, linear, yarn and longrope are known)",
     [](const LlamaHparams& h) {
         return h.rope_scaling && *h.rope_scaling != "none" && *h.rope_scaling != "linear" && *h.rope_scaling != "yarn" &&
             *h.rope_scaling != "longrope";
     }},
    {{"attention.layer_norm_rms_epsilon", nullptr}, "GGML_ASSERT(eps >= 0.0f)",
     "ggml/src/ggml-cpu/ops.cpp:3949 (ggml_compute_forward_rms_norm, at the first decode)",
     [](const LlamaHparams& h) { return eps_trips(h.rms_eps); }},
    {{"attention.layer_norm_epsilon", nullptr}, "GGML_ASSERT(eps >= 0.0f)",
     "ggml/src/ggml-cpu/ops.cpp:3843 (ggml_compute_forward_norm, at the first decode)",
     [](const LlamaHparams& h) { return eps_trips(h.norm_eps); }},
    {{"attention.head_count_kv", "attention.head_count"}, "GGML_ASSERT(ggml_can_mul_mat(a, b))",
     "ggml/src/ggml.c:3345 (ggml_mul_mat of K and Q in the attention: the KV heads must divide the heads)",
     [](const LlamaHparams& h) { return h.n_head && h.n_head_kv && *h.n_head > 0 && *h.n_head_kv > 0 && *h.n_head % *h.n_head_kv != 0; }},
    {{"attention.value_length", "attention.key_length"}, "GGML_ASSERT(n_embd_head == hparams.n_embd_head_k())",
     "src/models/<arch>.cpp (the graph builder, at the first decode)",
     [](const LlamaHparams& h) {
         auto k = head_size(h, h.key_length), v = head_size(h, h.value_length);
         return listed(kSameHeadSizeArchs, h.arch) && k && v && *k != *v;
     }},
    {{"rope.dimension_count", "attention.value_length"}, "GGML_ASSERT(n_embd_head == n_rot)",
     "src/models/<arch>.cpp (the graph builder, at the first decode)",
     [](const LlamaHparams& h) {
         auto v = head_size(h, h.value_length);
         return listed(kFullRopeArchs, h.arch) && h.n_rot && v && *h.n_rot != *v;
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
                                 values + ": the pinned llama.cpp aborts on " + row.assert_text + " at " + row.where, at->file});
    }
}

}  // namespace mlens
