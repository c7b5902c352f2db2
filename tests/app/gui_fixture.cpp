#include "gui_fixture.h"

#include <cmath>
#include <fstream>
#include <random>

#include "gguf_builder.h"

namespace mlens::test {

namespace {

struct FixtureTensor {
    std::string name;
    std::vector<uint64_t> ne;
    uint32_t type;
};

// Bytes per tensor for the ggml types the fixture uses (F32, F16, Q4_0, Q8_0, Q4_K, Q6_K);
// 64 bytes for the type ggml does not know.
uint64_t tensor_bytes(const FixtureTensor& t) {
    uint64_t n = 1;
    for (uint64_t d : t.ne) n *= d;
    switch (t.type) {
        case 0:
            return n * 4;
        case 1:
            return n * 2;
        case 2:
            return n / 32 * 18;
        case 8:
            return n / 32 * 34;
        case 12:
            return n / 256 * 144;
        case 14:
            return n / 256 * 210;
        default:
            return 64;
    }
}

std::vector<FixtureTensor> fixture_tensors() {
    std::vector<FixtureTensor> t = {{"token_embd.weight", {64, 21}, 8}};
    for (int b = 0; b < 2; ++b) {
        std::string p = "blk." + std::to_string(b) + ".";
        t.push_back({p + "attn_norm.weight", {64}, 0});
        t.push_back({p + "attn_q.weight", {64, 64}, 8});
        t.push_back({p + "attn_k.weight", {64, 32}, 2});
        t.push_back({p + "attn_v.weight", {64, 32}, 2});
        t.push_back({p + "ffn_up.weight", {64, 128}, 1});
        t.push_back({p + "ffn_down.weight", {128, 64}, 1});
    }
    t.push_back({"output_norm.weight", {64}, 0});
    t.push_back({"output.weight", {256, 21}, 14});
    t.push_back({"rope_freqs.weight", {256}, 12});
    t.push_back({"mystery.weight", {32}, 4});
    return t;
}

}  // namespace

std::vector<uint8_t> gui_fixture_bytes() {
    const std::vector<std::string> tokens = {"<unk>",
                                             "<s>",
                                             "</s>",
                                             "<0x0A>",
                                             "<0x20>",
                                             "\xE2\x96\x81the",
                                             "\xE2\x96\x81hello",
                                             " world",
                                             "\xC4\xA0world",
                                             "\xC4\x8A",
                                             "\n\t",
                                             "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
                                             "\xD1\x82\xD0\xB5\xD1\x81\xD1\x82",
                                             "\xCE\xB5\xCE\xBB\xCE\xBB\xCE\xB7\xCE\xBD\xCE\xB9\xCE\xBA\xCE\xAC",
                                             "<|im_start|>",
                                             "a\xE2\x80\xAE"
                                             "b",
                                             "\xFF\xFE",
                                             "  ",
                                             "\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81",
                                             "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4",
                                             "[UNUSED]"};
    const std::vector<int32_t> types = {2, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 1, 1, 1, 1, 5};
    const std::string chat_template =
        "{% for message in messages %}\n"
        "\t{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] }}\n"
        "{% endfor %}\n"
        "{# \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E: never executed #}\n";
    std::vector<FixtureTensor> tensors = fixture_tensors();

    GgufBuilder b;
    const uint64_t n_kv = 21;
    b.header(tensors.size(), n_kv);
    b.kv_string("general.architecture", "llama");
    b.kv_string("general.name", "tiny llama \xE2\x80\x94 GUI fixture");
    b.kv_u32("general.file_type", 7);
    b.kv_u32("llama.block_count", 2);
    b.kv_u32("llama.context_length", 256);
    b.kv_u32("llama.embedding_length", 64);
    b.kv_u32("llama.feed_forward_length", 128);
    b.kv_u32("llama.attention.head_count", 4);
    b.kv_u32("llama.rope.dimension_count", 16);
    b.kv_u32("llama.pooling_type", 1);
    b.kv("llama.attention.layer_norm_rms_epsilon", ValueType::f32).f32(1e-5f);
    b.kv_string("tokenizer.ggml.model", "llama");
    b.kv_strings("tokenizer.ggml.tokens", tokens);
    b.kv_array("tokenizer.ggml.scores", ValueType::f32, tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) b.f32(-0.25f * static_cast<float>(i));
    b.kv_array("tokenizer.ggml.token_type", ValueType::i32, types.size());
    for (int32_t t : types) b.u32(static_cast<uint32_t>(t));
    b.kv_u32("tokenizer.ggml.bos_token_id", 1);
    b.kv_u32("tokenizer.ggml.eos_token_id", 2);
    b.kv_u32("tokenizer.ggml.unknown_token_id", 0);
    b.kv_u32("tokenizer.ggml.padding_token_id", 999);
    b.kv_string("tokenizer.chat_template", chat_template);
    b.kv_string("fixture.note", "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 / line one\nline two");

    uint64_t offset = 0;
    std::vector<uint64_t> offsets;
    for (const FixtureTensor& t : tensors) {
        offsets.push_back(offset);
        b.tensor_info(t.name, t.ne, t.type, offset);
        offset += (tensor_bytes(t) + 31) / 32 * 32;
    }
    b.pad_to(32);
    uint32_t state = 12345;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const FixtureTensor& t = tensors[i];
        uint64_t n = tensor_bytes(t);
        if (t.type == 0) {
            for (uint64_t k = 0; k < n / 4; ++k) b.f32(std::sin(static_cast<float>(k) * 0.37f + static_cast<float>(i)));
        } else {
            for (uint64_t k = 0; k < n; ++k) {
                state = state * 1664525u + 1013904223u;
                b.u8(static_cast<uint8_t>(state >> 24));
            }
        }
        b.pad_to(32);
    }
    return b.bytes;
}

bool write_gui_fixture(const std::string& path) {
    std::vector<uint8_t> bytes = gui_fixture_bytes();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

std::vector<float> outlier_weights() {
    std::mt19937 rng(20240611);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(4096 * 16);
    for (float& x : values) x = normal(rng);
    for (size_t r = 0; r < 16; ++r)
        for (size_t c : {7u, 2900u}) values[r * 4096 + c] *= 80.0f;
    return values;
}

}  // namespace mlens::test
