#include "mlens/compat/ollama_origin.h"

#include <optional>

namespace mlens::compat {

namespace {

constexpr const char* kNotAKey = "not a key of gguf-py, and llama.cpp's converters write only gguf-py's keys";
constexpr const char* kSeparateMmproj =
    "llama.cpp's converters write vision, audio and projector tensors into a separate mmproj file "
    "(architecture clip), never into the text model";
constexpr const char* kNotATensor =
    "not a tensor name of gguf-py for this architecture, and llama.cpp's converters map every tensor to one";

// Collects the evidence of one file; each check adds at most one entry.
class Evidence {
public:
    Evidence(const Model& model, std::string arch, std::vector<OriginEvidence>& out)
        : m_model(model), m_arch(std::move(arch)), m_out(out) {}

    const std::string& arch() const { return m_arch; }

    void key(const std::string& key, const char* reason) {
        if (m_model.find(key)) add("KV " + key, reason);
    }
    void key_missing(const std::string& key, const char* reason) {
        if (!m_model.find(key)) add("KV " + key + " missing", reason);
    }
    void tensor(const std::string& name, const char* reason) {
        if (m_model.find_tensor(name)) add("tensor " + name, reason);
    }
    void tensor_prefix(const std::string& prefix, const char* reason) {
        for (const TensorInfo& t : m_model.tensors)
            if (t.name.starts_with(prefix)) return add("tensor " + t.name + " (prefix " + prefix + ")", reason);
    }
    void tensor_suffix(const std::string& suffix, const char* reason) {
        for (const TensorInfo& t : m_model.tensors)
            if (t.name.ends_with(suffix)) return add("tensor " + t.name + " (ends " + suffix + ")", reason);
    }
    void add(const std::string& marker, const char* reason) { m_out.push_back({m_arch + ": " + marker, reason}); }

private:
    const Model& m_model;
    std::string m_arch;
    std::vector<OriginEvidence>& m_out;
};

void gemma3(Evidence& e) {
    e.tensor("dense.0.weight", "upstream converts EmbeddingGemma as architecture gemma-embedding with dense_2/dense_3 tensors");
    e.tensor_prefix("v.", kSeparateMmproj);
    e.tensor_prefix("mm.", kSeparateMmproj);
    for (const char* k : {"gemma3.mm.tokens_per_image", "gemma3.rope.global.freq_base", "gemma3.rope.local.freq_base"}) e.key(k, kNotAKey);
    for (const char* k : {"tokenizer.ggml.add_padding_token", "tokenizer.ggml.add_unknown_token"})
        e.key(k, "gguf-py's special-vocab writer sets only add_bos, add_eos and add_sep");
    e.key_missing("gemma3.attention.layer_norm_rms_epsilon",
                  "upstream's gemma3 converter always writes it, and llama.cpp refuses a gemma3 file without it");
}

void gemma3n(Evidence& e, const Model& m) {
    const TensorInfo* te = m.find_tensor("token_embd.weight");
    const TensorInfo* pl = m.find_tensor("per_layer_token_embd.weight");
    if (!te || !pl || te->ne.size() < 2 || pl->ne.size() < 2 || te->ne[1] == pl->ne[1]) return;
    e.add("token_embd.weight with " + std::to_string(te->ne[1]) + " rows and per_layer_token_embd.weight with " + std::to_string(pl->ne[1]),
          "upstream pads both to the vocabulary size, and llama.cpp requires both to have n_vocab rows");
}

void gemma4(Evidence& e, const Model& m) {
    for (const char* p : {"a.", "v.", "mm.", "model.vision_tower."}) e.tensor_prefix(p, kSeparateMmproj);
    if (m.get_string("tokenizer.ggml.model") == "llama")
        e.add("tokenizer.ggml.model \"llama\"", "upstream's gemma4 converter always writes tokenizer.ggml.model \"gemma4\"");
}

void bert(Evidence& e, const Model& m) {
    const MetadataEntry* cm = m.find("tokenizer.ggml.precompiled_charsmap");
    if (!cm || !cm->value.is_array() || !cm->value.array || cm->value.array->element_type != ValueType::string) return;
    e.add("tokenizer.ggml.precompiled_charsmap as a STRING array",
          "gguf-py writes the charsmap as bytes (a UINT8 array); Ollama's writer has no UINT8 type");
}

void qwen35(Evidence& e) {
    for (const char* k : {".vision.block_count", ".image_token_id", ".ssm.v_head_reordered", ".rope.mrope_interleaved"})
        e.key(e.arch() + k, kNotAKey);
    e.tensor_prefix("mtp.", "upstream writes multi-token-prediction layers as blk.N.nextn.* tensors");
    e.tensor_prefix("v.", kSeparateMmproj);
}

void mistral3(Evidence& e) {
    e.tensor_prefix("v.", kSeparateMmproj);
    e.tensor_prefix("mm.", kSeparateMmproj);
    for (const char* k : {"mistral3.rope.scaling.beta_fast", "mistral3.rope.scaling.mscale_all_dim", "mistral3.rope.scaling_beta"})
        e.key(k, kNotAKey);
}

// Architecture names Ollama's converters write and llama.cpp does not know.
bool ollama_only_arch(const std::string& arch) {
    for (const char* a : {"gptoss", "olmo3", "qwen25vl", "glm4moelite", "deepseekocr", "glmocr", "nemotron_h_omni"})
        if (arch == a) return true;
    return false;
}

// Keys of the first shard ascend when each "<arch>."-prefixed key may compare with or without its
// prefix (Ollama sorts its key map, whose keys carry the prefix or not). Taking the smallest form
// that still ascends at each step finds such an order whenever one exists.
std::optional<size_t> sorted_key_count(const Model& m, const std::string& arch) {
    const std::string prefix = arch + ".";
    std::string previous;
    size_t count = 0;
    for (const MetadataEntry& entry : m.metadata) {
        if (entry.file != 0) continue;
        std::optional<std::string> pick;
        auto consider = [&](std::string form) {
            if ((count == 0 || form > previous) && (!pick || form < *pick)) pick = std::move(form);
        };
        consider(entry.key);
        if (entry.key.starts_with(prefix)) consider(entry.key.substr(prefix.size()));
        if (!pick) return std::nullopt;
        previous = std::move(*pick);
        ++count;
    }
    return count;
}

}  // namespace

std::string OllamaOrigin::summary() const {
    if (evidence.empty()) return "no evidence that Ollama made this file";
    std::string out = "Ollama-made: ";
    for (size_t i = 0; i < evidence.size(); ++i) out += (i ? "; " : "") + evidence[i].marker;
    return out;
}

OllamaOrigin detect_ollama_origin(const Model& model) {
    OllamaOrigin origin;
    if (model.format != Format::gguf) return origin;
    const std::string arch = model.get_string("general.architecture").value_or("");
    Evidence e(model, arch, origin.evidence);

    if (ollama_only_arch(arch))
        e.add("architecture name " + arch, "not an architecture of llama.cpp or gguf-py; Ollama's converters name it so");
    if (arch == "gemma3") gemma3(e);
    if (arch == "gemma3n") gemma3n(e, model);
    if (arch == "gemma4") gemma4(e, model);
    if (arch == "bert") bert(e, model);
    if (arch == "qwen35" || arch == "qwen35moe") qwen35(e);
    if (arch == "qwen3next")
        e.tensor_suffix(".ssm_dt", "upstream writes blk.N.ssm_dt.bias, the name llama.cpp's qwen3next loader asks for");
    if (arch == "qwen3vl" || arch == "qwen3vlmoe")
        e.key_missing(arch + ".rope.dimension_sections",
                      "upstream's qwen3vl converter always writes it, and llama.cpp refuses the file without it");
    if (arch == "laguna") {
        e.key("laguna.rope.swa.dimension_count", kNotAKey);
        e.key("laguna.rope.swa.freq_base", kNotAKey);
        e.tensor("blk.0.attn_g.weight", kNotATensor);
    }
    if (arch == "lfm2") e.tensor("output_norm.weight", "upstream names lfm2's final norm token_embd_norm.weight");
    if (arch == "mistral3") mistral3(e);
    if (arch == "llama4") {
        e.tensor_prefix("v.", kSeparateMmproj);
        e.tensor_prefix("mm.", kSeparateMmproj);
    }
    if (arch == "nemotron_h_moe") {
        e.tensor_prefix("blk.0.ffn_latent_in", "upstream names these tensors ffn_latent_down and ffn_latent_up");
        e.tensor_prefix("blk.1.ffn_latent_in", "upstream names these tensors ffn_latent_down and ffn_latent_up");
        e.tensor_prefix("mtp.", "upstream writes multi-token-prediction layers as blk.N.nextn.* tensors");
    }
    // Ollama writes general.architecture into every file it makes: a file without one shows nothing.
    if (arch.empty()) return origin;
    e.key(arch + ".source_quantization", kNotAKey);
    e.key(arch + ".source_fp8_tensors", kNotAKey);
    if (auto sorted = sorted_key_count(model, arch); sorted && *sorted >= kMinSortedKeys)
        e.add("all " + std::to_string(*sorted) + " keys in sorted order, as Ollama's GGUF writer writes them",
              "llama.cpp's converters write keys in the order they add them (general.architecture, general.type, "
              "general.name, ...), which never ascends, and its tools keep the order of the file they copy");
    return origin;
}

}  // namespace mlens::compat
