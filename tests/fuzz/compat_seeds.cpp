// compat_seeds OUT_DIR: writes the seed corpus of compat_plan_fuzz — small Ollama-made GGUFs
// (zero-filled tensors, a few KB each) whose markers make the compat handlers fire: gemma3 with
// its vision tower (text and clip edits, an F16→F32 data op), llama4 with its vision adapter,
// gpt-oss, lfm2, olmo3 and qwen35 (RoPE and norm data ops).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mlens/compat/value_builders.h"
#include "mlens/formats/gguf_writer.h"
#include "model_parts.h"

namespace {

using namespace mlens;

constexpr uint32_t kF32 = 0, kF16 = 1;

class Seed {
public:
    explicit Seed(const std::string& arch) {
        m_model.format = Format::gguf;
        str("general.architecture", arch);
    }
    Seed& kv(const std::string& key, Value v) {
        test::add_metadata(m_model, key, std::move(v));
        return *this;
    }
    Seed& str(const std::string& key, const std::string& v) { return kv(key, compat::value_string(v)); }
    Seed& u32(const std::string& key, uint32_t v) { return kv(key, Value::of_u32(v)); }
    Seed& f32(const std::string& key, float v) { return kv(key, compat::value_f32(v)); }
    Seed& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type = kF32) {
        m_model.tensors.push_back(test::tensor_info(name, type, std::move(ne)));
        return *this;
    }
    bool write(const std::string& path) const {
        Status s = write_gguf(m_model, path, nullptr, [](size_t, uint64_t, uint64_t len, void* dst) -> Status {
            std::memset(dst, 0, len);
            return ok_status();
        });
        if (!s) std::fprintf(stderr, "compat_seeds: %s: %s\n", path.c_str(), s.error().to_string().c_str());
        return static_cast<bool>(s);
    }

private:
    Model m_model;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: compat_seeds OUT_DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    std::vector<std::pair<std::string, Seed>> seeds;
    seeds.emplace_back("gemma3.gguf",
                       Seed("gemma3")
                           .u32("gemma3.embedding_length", 16)
                           .u32("gemma3.block_count", 1)
                           .u32("gemma3.mm.tokens_per_image", 4)
                           .u32("gemma3.vision.block_count", 1)
                           .u32("gemma3.vision.embedding_length", 8)
                           .u32("gemma3.vision.image_size", 28)
                           .u32("gemma3.vision.patch_size", 14)
                           .kv("tokenizer.ggml.tokens", compat::array_strings({"<pad>", "<eos>", "a", "b", "<img>"}))
                           .tensor("token_embd.weight", {16, 4}, kF16)
                           .tensor("blk.0.attn_norm.weight", {16})
                           .tensor("v.patch_embedding.weight", {2, 2, 3, 8}, kF16)
                           .tensor("v.blk.0.layer_norm1.weight", {8})
                           .tensor("mm.mm_input_projection.weight", {8, 16}, kF16));
    seeds.emplace_back("llama4.gguf",
                       Seed("llama4")
                           .u32("llama4.embedding_length", 16)
                           .u32("llama4.vision.block_count", 1)
                           .f32("llama4.vision.pixel_shuffle_ratio", 0.25f)
                           .tensor("blk.0.attn_norm.weight", {16})
                           .tensor("v.positional_embedding_vlm", {8, 5})
                           .tensor("v.vision_adapter.mlp.fc1.weight", {8, 8}, kF16)
                           .tensor("mm.linear_1.weight", {8, 16}, kF16)
                           .tensor("v.class_embedding", {8}));
    seeds.emplace_back("gptoss.gguf",
                       Seed("gptoss")
                           .u32("gptoss.block_count", 1)
                           .tensor("blk.0.attn_out.weight", {8, 8}, kF16)
                           .tensor("blk.0.attn_sinks", {2})
                           .tensor("blk.0.ffn_norm.weight", {8})
                           .tensor("blk.0.ffn_gate_exps.weight", {8, 4, 2}, kF16));
    seeds.emplace_back(
        "lfm2.gguf",
        Seed("lfm2").u32("lfm2.feed_forward_length", 12).tensor("blk.0.ffn_gate.weight", {8, 4}, kF16).tensor("output_norm.weight", {8}));
    seeds.emplace_back("olmo3.gguf", Seed("olmo3").u32("olmo3.block_count", 2).f32("olmo3.rope.freq_base", 500000.0f));
    seeds.emplace_back("qwen35.gguf",
                       Seed("qwen35")
                           .u32("qwen35.feed_forward_length", 16)
                           .u32("qwen35.attention.head_count", 2)
                           .tensor("blk.0.ssm_dt", {4})
                           .tensor("blk.0.attn_q.weight", {8, 8}, kF16)
                           .tensor("blk.0.attn_norm.weight", {8})
                           .tensor("v.pos_embed.weight", {4, 4}, kF16));
    int failed = 0;
    for (const auto& [name, seed] : seeds) failed += !seed.write(dir + "/" + name);
    return failed ? 1 : 0;
}
