#include "ollama_demo_models.h"

#include <ggml.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "demo_source.h"
#include "mlens/compat/value_builders.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/text/utf8.h"

namespace mlens::demo {

namespace {

using compat::array_f32;
using compat::array_i32;
using compat::array_strings;

constexpr uint64_t kEmbd = 64, kFf = 128, kHeadDim = 16;

const char* const kWords[] = {"the",  "a",    "of",    "and",  "to",   "in",   "is",    "it",    "that", "was",   "for",   "on",
                              "are",  "with", "as",    "be",   "at",   "one",  "have",  "this",  "from", "by",    "hot",   "word",
                              "but",  "what", "some",  "we",   "can",  "out",  "other", "were",  "all",  "there", "when",  "up",
                              "use",  "your", "how",   "said", "an",   "each", "she",   "which", "do",   "their", "time",  "if",
                              "will", "way",  "about", "many", "then", "them", "write", "would", "like", "so",    "these", "her"};

// Block number of "blk.<n>." names, for Ollama's tensor order.
std::optional<unsigned long> block_of(const std::string& name) {
    if (!name.starts_with("blk.")) return std::nullopt;
    size_t dot = name.find('.', 4);
    if (dot == std::string::npos || dot == 4) return std::nullopt;
    return std::stoul(name.substr(4, dot - 4));
}

// One Ollama-format file: KVs under their writer map keys and tensors with seeded values.
class OllamaFile {
public:
    OllamaFile(std::string arch, uint64_t seed) : m_arch(std::move(arch)), m_rng(seed) {
        kv("general.architecture", compat::value_string(m_arch));
        kv("general.file_type", Value::of_u32(1));
        kv("general.quantization_version", Value::of_u32(2));
    }

    // `key` as in Ollama's KV map: keys outside general./tokenizer. are short and get the
    // architecture prefix when written.
    OllamaFile& kv(std::string key, Value v) {
        m_kvs.emplace_back(std::move(key), std::move(v));
        return *this;
    }
    OllamaFile& u32(std::string key, uint32_t v) { return kv(std::move(key), Value::of_u32(v)); }
    OllamaFile& f32(std::string key, float v) { return kv(std::move(key), compat::value_f32(v)); }
    OllamaFile& str(std::string key, std::string v) { return kv(std::move(key), compat::value_string(std::move(v))); }
    OllamaFile& boolean(std::string key, bool v) { return kv(std::move(key), compat::value_bool(v)); }

    // 1-D tensors and biases are F32, everything else F16 (the legacy converter's kinds). Norm
    // weights sit near 1, the rest is uniform in ±scale.
    OllamaFile& tensor(std::string name, std::vector<uint64_t> ne, float scale = 0.08f) {
        const bool f32 = ne.size() == 1 || name.ends_with(".bias");
        const bool norm = ne.size() == 1 && !name.ends_with(".bias");
        uint64_t n = 1;
        for (uint64_t d : ne) n *= d;
        std::vector<float> values(n);
        for (float& v : values) v = norm ? 1.0f + m_rng.uniform_pm(0.1f) : m_rng.uniform_pm(scale);
        std::vector<uint8_t> bytes(n * (f32 ? 4 : 2));
        if (f32)
            std::memcpy(bytes.data(), values.data(), bytes.size());
        else
            ggml_fp32_to_fp16_row(values.data(), reinterpret_cast<ggml_fp16_t*>(bytes.data()), static_cast<int64_t>(n));
        TensorInfo t;
        t.name = std::move(name);
        t.type = describe_ggml_type(f32 ? GGML_TYPE_F32 : GGML_TYPE_F16);
        t.ne = std::move(ne);
        t.n_elements = n;
        t.n_bytes = bytes.size();
        m_tensors.push_back({std::move(t), std::move(bytes)});
        return *this;
    }

    bool write(const std::string& path) {
        Model m;
        m.format = Format::gguf;
        std::stable_sort(m_kvs.begin(), m_kvs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [key, value] : m_kvs) {
            MetadataEntry e;
            const bool prefixed = key.starts_with("general.") || key.starts_with("tokenizer.");
            e.key = prefixed ? key : m_arch + "." + key;
            e.value = value;
            m.metadata.push_back(std::move(e));
        }
        std::stable_sort(m_tensors.begin(), m_tensors.end(), [](const Stored& a, const Stored& b) {
            auto ba = block_of(a.info.name), bb = block_of(b.info.name);
            if (ba.has_value() != bb.has_value()) return ba.has_value();
            if (ba && *ba != *bb) return *ba < *bb;
            return a.info.name < b.info.name;
        });
        for (const Stored& s : m_tensors) m.tensors.push_back(s.info);
        Status status = write_gguf(m, path, nullptr, [&](size_t i, uint64_t offset, uint64_t length, void* dst) -> Status {
            std::memcpy(dst, m_tensors[i].bytes.data() + offset, length);
            return ok_status();
        });
        if (!status) std::fprintf(stderr, "make_demo_models: %s: %s\n", path.c_str(), status.error().to_string().c_str());
        return static_cast<bool>(status);
    }

private:
    struct Stored {
        TensorInfo info;
        std::vector<uint8_t> bytes;
    };
    std::string m_arch;
    demo::SplitMix64 m_rng;
    std::vector<std::pair<std::string, Value>> m_kvs;
    std::vector<Stored> m_tensors;
};

// SentencePiece-style vocabulary: 4 specials, 256 byte tokens, "▁word" pieces.
struct SpmVocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;
};

SpmVocab spm_vocab() {
    SpmVocab v;
    auto add = [&](std::string t, float score, int32_t type) {
        v.tokens.push_back(std::move(t));
        v.scores.push_back(score);
        v.types.push_back(type);
    };
    for (const char* s : {"<pad>", "<eos>", "<bos>", "<unk>"}) add(s, 0.0f, 3);
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        add(buf, 0.0f, 6);
    }
    float score = -1.0f;
    for (const char* w : kWords) add(std::string("\xE2\x96\x81") + w, score--, 1);
    return v;
}

bool write_gemma3(const std::string& path) {
    SpmVocab v = spm_vocab();
    const uint64_t rows = v.tokens.size();
    // Ollama kept the image tokens past the embedding rows (handle_gemma3 truncates them).
    for (const char* s : {"<start_of_image>", "<end_of_image>", "<image_soft_token>", "<unused0>"}) {
        v.tokens.push_back(s);
        v.scores.push_back(0.0f);
        v.types.push_back(4);
    }
    OllamaFile f("gemma3", 20260301);
    f.u32("attention.head_count", 4)
        .u32("attention.head_count_kv", 2)
        .u32("attention.key_length", kHeadDim)
        .u32("attention.value_length", kHeadDim)
        .u32("attention.sliding_window", 512)
        .u32("block_count", 2)
        .u32("context_length", 131072)
        .u32("embedding_length", kEmbd)
        .u32("feed_forward_length", kFf)
        .u32("mm.tokens_per_image", 256);
    f.str("tokenizer.ggml.model", "llama")
        .str("tokenizer.ggml.pre", "default")
        .kv("tokenizer.ggml.tokens", array_strings(v.tokens))
        .kv("tokenizer.ggml.scores", array_f32(v.scores))
        .kv("tokenizer.ggml.token_type", array_i32(v.types))
        .u32("tokenizer.ggml.bos_token_id", 2)
        .u32("tokenizer.ggml.eos_token_id", 1)
        .u32("tokenizer.ggml.unknown_token_id", 3)
        .u32("tokenizer.ggml.padding_token_id", 0)
        .boolean("tokenizer.ggml.add_bos_token", true)
        .boolean("tokenizer.ggml.add_eos_token", false)
        .boolean("tokenizer.ggml.add_padding_token", false)
        .boolean("tokenizer.ggml.add_unknown_token", false);
    f.u32("vision.attention.head_count", 4)
        .f32("vision.attention.layer_norm_epsilon", 1e-6f)
        .u32("vision.block_count", 1)
        .u32("vision.embedding_length", kEmbd)
        .u32("vision.feed_forward_length", kFf)
        .u32("vision.image_size", 56)
        .u32("vision.num_channels", 3)
        .u32("vision.patch_size", 14);

    const uint64_t q = 4 * kHeadDim, kv = 2 * kHeadDim;
    f.tensor("token_embd.weight", {kEmbd, rows}, 0.5f).tensor("output_norm.weight", {kEmbd});
    for (int b = 0; b < 2; ++b) {
        const std::string p = "blk." + std::to_string(b) + ".";
        f.tensor(p + "attn_norm.weight", {kEmbd})
            .tensor(p + "attn_q.weight", {kEmbd, q})
            .tensor(p + "attn_k.weight", {kEmbd, kv})
            .tensor(p + "attn_v.weight", {kEmbd, kv})
            .tensor(p + "attn_q_norm.weight", {kHeadDim})
            .tensor(p + "attn_k_norm.weight", {kHeadDim})
            .tensor(p + "attn_output.weight", {q, kEmbd})
            .tensor(p + "post_attention_norm.weight", {kEmbd})
            .tensor(p + "ffn_norm.weight", {kEmbd})
            .tensor(p + "ffn_gate.weight", {kEmbd, kFf})
            .tensor(p + "ffn_up.weight", {kEmbd, kFf})
            .tensor(p + "ffn_down.weight", {kFf, kEmbd})
            .tensor(p + "post_ffw_norm.weight", {kEmbd});
    }
    f.tensor("v.patch_embedding.weight", {14, 14, 3, kEmbd})
        .tensor("v.patch_embedding.bias", {kEmbd})
        .tensor("v.position_embedding.weight", {kEmbd, 16});
    for (const char* proj : {"attn_q", "attn_k", "attn_v", "attn_output"})
        f.tensor(std::string("v.blk.0.") + proj + ".weight", {kEmbd, kEmbd}).tensor(std::string("v.blk.0.") + proj + ".bias", {kEmbd});
    f.tensor("v.blk.0.layer_norm1.weight", {kEmbd})
        .tensor("v.blk.0.layer_norm1.bias", {kEmbd})
        .tensor("v.blk.0.layer_norm2.weight", {kEmbd})
        .tensor("v.blk.0.layer_norm2.bias", {kEmbd})
        .tensor("v.blk.0.mlp.fc1.weight", {kEmbd, kFf})
        .tensor("v.blk.0.mlp.fc1.bias", {kFf})
        .tensor("v.blk.0.mlp.fc2.weight", {kFf, kEmbd})
        .tensor("v.blk.0.mlp.fc2.bias", {kEmbd})
        .tensor("v.post_layernorm.weight", {kEmbd})
        .tensor("v.post_layernorm.bias", {kEmbd})
        .tensor("mm.mm_input_projection.weight", {kEmbd, kEmbd})
        .tensor("mm.mm_soft_emb_norm.weight", {kEmbd});
    return f.write(path);
}

// GPT-2 byte-level pieces: the 256 byte characters, then "Ġword" pieces and Qwen's specials.
std::vector<std::string> bpe_tokens() {
    std::vector<std::string> out;
    uint32_t shifted = 256;
    for (uint32_t b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        std::string piece;
        append_utf8(piece, printable ? b : shifted++);
        out.push_back(std::move(piece));
    }
    for (const char* w : kWords) out.push_back(std::string("\xC4\xA0") + w);
    return out;
}

bool write_qwen25vl(const std::string& path) {
    std::vector<std::string> tokens = bpe_tokens();
    std::vector<int32_t> types(tokens.size(), 1);
    const uint32_t first_special = static_cast<uint32_t>(tokens.size());
    for (const char* s : {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>"}) {
        tokens.push_back(s);
        types.push_back(3);
    }
    const uint64_t n_vocab = tokens.size();
    OllamaFile f("qwen25vl", 20260302);
    f.u32("attention.head_count", 4)
        .u32("attention.head_count_kv", 2)
        .f32("attention.layer_norm_rms_epsilon", 1e-6f)
        .u32("block_count", 2)
        .u32("context_length", 128000)
        .u32("embedding_length", kEmbd)
        .u32("feed_forward_length", kFf)
        .f32("rope.freq_base", 1000000.0f)
        .kv("rope.mrope_section", array_i32({2, 3, 3}));
    f.str("tokenizer.ggml.model", "gpt2")
        .str("tokenizer.ggml.pre", "qwen2")
        .kv("tokenizer.ggml.tokens", array_strings(tokens))
        .kv("tokenizer.ggml.token_type", array_i32(types))
        .kv("tokenizer.ggml.merges", array_strings({"\xC4\xA0 t", "\xC4\xA0 a", "h e", "i n", "\xC4\xA0t he"}))
        .u32("tokenizer.ggml.eos_token_id", first_special + 2)
        .u32("tokenizer.ggml.padding_token_id", first_special)
        .u32("tokenizer.ggml.bos_token_id", first_special)
        .boolean("tokenizer.ggml.add_bos_token", false)
        .str("tokenizer.chat_template",
             "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
             "{{ message['content'] }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n");
    f.u32("vision.attention.head_count", 4)
        .f32("vision.attention.layer_norm_epsilon", 1e-6f)
        .u32("vision.block_count", 2)
        .u32("vision.embedding_length", kEmbd)
        .kv("vision.fullatt_block_indexes", array_i32({1}))
        .u32("vision.num_channels", 3)
        .u32("vision.patch_size", 14)
        .u32("vision.spatial_merge_size", 2)
        .u32("vision.temporal_patch_size", 2)
        .u32("vision.window_size", 112);

    const uint64_t q = 4 * kHeadDim, kv = 2 * kHeadDim;
    f.tensor("token_embd.weight", {kEmbd, n_vocab}, 0.5f).tensor("output.weight", {kEmbd, n_vocab}).tensor("output_norm.weight", {kEmbd});
    for (int b = 0; b < 2; ++b) {
        const std::string p = "blk." + std::to_string(b) + ".";
        f.tensor(p + "attn_norm.weight", {kEmbd})
            .tensor(p + "attn_q.weight", {kEmbd, q})
            .tensor(p + "attn_q.bias", {q})
            .tensor(p + "attn_k.weight", {kEmbd, kv})
            .tensor(p + "attn_k.bias", {kv})
            .tensor(p + "attn_v.weight", {kEmbd, kv})
            .tensor(p + "attn_v.bias", {kv})
            .tensor(p + "attn_output.weight", {q, kEmbd})
            .tensor(p + "ffn_norm.weight", {kEmbd})
            .tensor(p + "ffn_gate.weight", {kEmbd, kFf})
            .tensor(p + "ffn_up.weight", {kEmbd, kFf})
            .tensor(p + "ffn_down.weight", {kFf, kEmbd});
        const std::string vp = "v.blk." + std::to_string(b) + ".";
        for (const char* proj : {"attn_q", "attn_k", "attn_v", "attn_out"})
            f.tensor(vp + proj + ".weight", {kEmbd, kEmbd}).tensor(vp + proj + ".bias", {kEmbd});
        f.tensor(vp + "ffn_gate.weight", {kEmbd, kFf})
            .tensor(vp + "ffn_gate.bias", {kFf})
            .tensor(vp + "ffn_up.weight", {kEmbd, kFf})
            .tensor(vp + "ffn_up.bias", {kFf})
            .tensor(vp + "ffn_down.weight", {kFf, kEmbd})
            .tensor(vp + "ffn_down.bias", {kEmbd})
            .tensor(vp + "ln1.weight", {kEmbd})
            .tensor(vp + "ln2.weight", {kEmbd});
    }
    const uint64_t merged = 4 * kEmbd;  // spatial_merge_size² patches per merged token
    f.tensor("v.patch_embd_0.weight", {14, 14, 3, kEmbd})
        .tensor("v.patch_embd_1.weight", {14, 14, 3, kEmbd})
        .tensor("v.merger.ln_q.weight", {kEmbd})
        .tensor("v.merger.mlp.0.weight", {merged, merged})
        .tensor("v.merger.mlp.0.bias", {merged})
        .tensor("v.merger.mlp.2.weight", {merged, kEmbd})
        .tensor("v.merger.mlp.2.bias", {kEmbd});
    return f.write(path);
}

}  // namespace

bool write_ollama_demo_models(const std::string& dir) {
    return write_gemma3(dir + "/ollama-gemma3.gguf") && write_qwen25vl(dir + "/ollama-qwen25vl.gguf");
}

}  // namespace mlens::demo
