#include "loadability_fixtures.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "build_paths.h"
#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "ollama_arch_models.h"
#include "tiny_models.h"

namespace mlens::test {

namespace {

std::string demo_file(const std::string& name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

// A llama header with `type` for token_embd.weight [256, 2] whose data takes `embd_bytes`, then
// output_norm.weight F32 [256] right after it: the layout a writer with another block size makes.
void write_layout_fixture(const std::string& path, uint32_t type, uint64_t embd_bytes) {
    GgufBuilder b;
    b.header(2, 1);
    b.kv_string("general.architecture", "llama");
    b.tensor_info("token_embd.weight", {256, 2}, type, 0);
    b.tensor_info("output_norm.weight", {256}, 0, embd_bytes);
    b.pad_to(32);
    b.bytes.resize(b.bytes.size() + embd_bytes + 256 * 4, 0);
    write_whole_file(path, b.bytes);
}

}  // namespace

Value f32_value(float v) {
    Scalar s;
    s.type = ValueType::f32;
    uint32_t bits = 0;
    std::memcpy(&bits, &v, 4);
    s.bits = bits;
    return Value::of_scalar(s);
}

void set_metadata(Model& model, const std::string& key, Value value) {
    for (MetadataEntry& e : model.metadata)
        if (e.key == key) {
            e.value = std::move(value);
            return;
        }
    MetadataEntry e;
    e.key = key;
    e.value = std::move(value);
    model.metadata.push_back(std::move(e));
}

void remove_metadata(Model& model, const std::string& key) {
    std::erase_if(model.metadata, [&](const MetadataEntry& e) { return e.key == key; });
}

void write_demo_variant(const std::string& path, const std::function<void(Model&)>& edit, const std::string& demo_name) {
    auto demo = open_gguf(demo_file(demo_name));
    REQUIRE(demo);
    Model edited = *demo;
    edit(edited);
    const Model& source = *demo;
    auto provider = [&](size_t index, uint64_t offset, uint64_t length, void* dst) -> Status {
        const std::string& name = edited.tensors[index].name;
        for (size_t i = 0; i < source.tensors.size(); ++i)
            if (source.tensors[i].name == name) return source.read_tensor_bytes(i, offset, length, dst);
        std::memset(dst, 0, length);
        return ok_status();
    };
    REQUIRE(write_gguf(edited, path, nullptr, provider));
}

std::vector<LoadFixture> load_fixtures(const TempDir& dir) {
    std::vector<LoadFixture> out;
    auto variant = [&](LoadFixture f, const std::function<void(Model&)>& edit) {
        f.path = dir.file(f.name + ".gguf");
        write_demo_variant(f.path, edit);
        out.push_back(std::move(f));
    };
    variant({"unknown-architecture", "", "does_not_load", 1, "unknown_architecture", "general.architecture",
             "unknown model architecture: 'mamba3000'", "", "unknown model architecture: 'mamba3000'"},
            [](Model& m) { set_metadata(m, "general.architecture", Value::of_string("mamba3000")); });
    variant({"near-miss-architecture", "", "does_not_load", 1, "unknown_architecture", "general.architecture",
             "unknown model architecture: 'gpt_oss'", "the closest architecture the linked llama.cpp knows is 'gpt-oss'", "unknown model architecture: 'gpt_oss'"},
            [](Model& m) { set_metadata(m, "general.architecture", Value::of_string("gpt_oss")); });
    variant({"duplicate-key", "", "does_not_load", 1, "duplicate_name", "llama.context_length",
             "key 'llama.context_length' appears more than once: llama.cpp refuses the file (\"duplicate key\")",
             "the writer gave the name twice: write the file again, keeping one of them", "duplicate key 'llama.context_length'"},
            [](Model& m) { m.metadata.push_back(*m.find("llama.context_length")); });
    variant({"duplicate-tensor", "", "does_not_load", 1, "duplicate_name", "blk.0.attn_k.weight",
             "tensor 'blk.0.attn_k.weight' appears more than once: llama.cpp refuses the file (\"duplicate tensor name\")",
             "the writer gave the name twice: write the file again, keeping one of them", "duplicate tensor name 'blk.0.attn_k.weight'"},
            [](Model& m) {
                for (TensorInfo& t : m.tensors)
                    if (t.name == "blk.1.attn_k.weight") t.name = "blk.0.attn_k.weight";
            });
    variant({"missing-key", "", "does_not_load", 1, "missing_key", "llama.attention.layer_norm_rms_epsilon",
             "key not found in model: llama.attention.layer_norm_rms_epsilon",
             "set it to the model's config.json \"rms_norm_eps\" (the value convert_hf_to_gguf.py writes there)",
             "key not found in model: llama.attention.layer_norm_rms_epsilon"},
            [](Model& m) { remove_metadata(m, "llama.attention.layer_norm_rms_epsilon"); });
    variant({"extra-tensor", "", "does_not_load", 1, "extra_tensor", "blk.0.ffn_extra.weight",
             "tensor 'blk.0.ffn_extra.weight' is not created by the llama loader: llama.cpp counts them and stops with \"wrong number of tensors\"",
             "remove them (they belong to another architecture or to a separate file, e.g. an mmproj)", "wrong number of tensors"},
            [](Model& m) {
                TensorInfo t = *m.find_tensor("blk.0.ffn_norm.weight");
                t.name = "blk.0.ffn_extra.weight";
                m.tensors.push_back(t);
            });
    variant({"missing-tensor", "", "does_not_load", 1, "missing_tensor", "blk.1.ffn_norm.weight", "tensor 'blk.1.ffn_norm.weight' not found",
             "the llama loader requires it in every file: the file is incomplete or its converter named it differently",
             "tensor 'blk.1.ffn_norm.weight' not found"},
            [](Model& m) { std::erase_if(m.tensors, [](const TensorInfo& t) { return t.name == "blk.1.ffn_norm.weight"; }); });
    variant({"wrong-shape", "", "does_not_load", 1, "wrong_shape", "token_embd.weight",
             "tensor 'token_embd.weight' has wrong shape: its last dimension is 31999, the vocabulary's token count (32000) is expected",
             "the vocabulary arrays (tokenizer.ggml.*) and the tensor disagree: one of them was cut or padded without the other",
             "tensor 'token_embd.weight' has wrong shape"},
            [](Model& m) {
                TensorInfo& t = *std::find_if(m.tensors.begin(), m.tensors.end(), [](const TensorInfo& x) { return x.name == "token_embd.weight"; });
                t.n_bytes = *t.n_bytes / t.ne[1] * (t.ne[1] - 1);
                t.n_elements = t.n_elements / t.ne[1] * (t.ne[1] - 1);
                t.ne[1] -= 1;
            });
    variant({"embedding-length", "", "does_not_load", 7, "wrong_shape", "token_embd.weight",
             "tensor 'token_embd.weight' has wrong shape: its first dimension is 64, the embedding length (llama.embedding_length = 65) is expected",
             "llama.embedding_length and the tensors disagree: one was changed without the other", "tensor 'token_embd.weight' has wrong shape"},
            [](Model& m) { set_metadata(m, "llama.embedding_length", Value::of_u32(65)); });
    variant({"no-token-list", "", "does_not_load", 1, "bad_vocabulary", "tokenizer.ggml.tokens", "cannot find tokenizer vocab in model file",
             "the token list (tokenizer.ggml.tokens) is missing: put back the vocabulary the file was converted with",
             "cannot find tokenizer vocab in model file"},
            [](Model& m) { remove_metadata(m, "tokenizer.ggml.tokens"); });
    variant({"no-tokenizer-model", "", "does_not_load", 1, "missing_key", "tokenizer.ggml.model", "key not found in model: tokenizer.ggml.model",
             "convert_hf_to_gguf.py writes it with the vocabulary (\"llama\", \"gpt2\", ...; \"none\" for a model without one)",
             "key not found in model: tokenizer.ggml.model"},
            [](Model& m) { remove_metadata(m, "tokenizer.ggml.model"); });
    variant({"unknown-tokenizer", "", "does_not_load", 1, "bad_vocabulary", "tokenizer.ggml.model", "unknown tokenizer: 'sentencepiece'",
             "the linked llama.cpp knows bert, gemma4, gpt2, hybriddna, llama, no_vocab, none, plamo2, rwkv, t5, test, whitespace",
             "unknown tokenizer: 'sentencepiece'"},
            [](Model& m) { set_metadata(m, "tokenizer.ggml.model", Value::of_string("sentencepiece")); });
    variant({"tokenizer-model-type", "", "does_not_load", 1, "bad_vocabulary", "tokenizer.ggml.model",
             "key tokenizer.ggml.model has wrong type u32 but expected type str", "store the tokenizer model's name as a STRING",
             "key tokenizer.ggml.model has wrong type u32 but expected type str"},
            [](Model& m) { set_metadata(m, "tokenizer.ggml.model", Value::of_u32(1)); });
    variant({"bpe-without-merges", "", "does_not_load", 1, "bad_vocabulary", "tokenizer.ggml.merges", "cannot find tokenizer merges in model file",
             "a gpt2 tokenizer needs its BPE merges (tokenizer.ggml.merges): put back the ones the file was converted with",
             "cannot find tokenizer merges in model file"},
            [](Model& m) { set_metadata(m, "tokenizer.ggml.model", Value::of_string("gpt2")); });
    // A "none" tokenizer: llama.cpp never reads the token list, so its token count is
    // llama.vocab_size (absent: 0) and the 32000-row embeddings no longer fit.
    variant({"no-vocab-tokenizer", "", "does_not_load", 2, "wrong_shape", "token_embd.weight",
             "tensor 'token_embd.weight' has wrong shape: its last dimension is 32000, the vocabulary's token count (0) is expected",
             "the vocabulary arrays (tokenizer.ggml.*) and the tensor disagree: one of them was cut or padded without the other",
             "tensor 'token_embd.weight' has wrong shape"},
            [](Model& m) { set_metadata(m, "tokenizer.ggml.model", Value::of_string("none")); });
    variant({"load-assert", "", "does_not_load", 1, "load_assert", "llama.expert_used_count",
             "llama.cpp aborts while loading: GGML_ASSERT(n_expert_used_max <= hparams.n_expert) at src/llama-model.cpp:1294 "
             "(llama_model_base::load_hparams)",
             "correct llama.expert_used_count (the value the model's config.json gives)",
             "GGML_ASSERT(n_expert_used_max <= hparams.n_expert)"},
            [](Model& m) { set_metadata(m, "llama.expert_used_count", Value::of_u32(2)); });

    LoadFixture unknown{"unknown-type", dir.file("unknown-type.gguf"), "does_not_load", 1, "unknown_type", "token_embd.weight",
                        "tensor 'token_embd.weight' has ggml type id 43, which the linked ggml does not know (it knows ids below 43, removed "
                        "ones aside)",
                        "requantize it with the linked llama.cpp's llama-quantize, or load it with the llama.cpp build that wrote it",
                        "tensor 'token_embd.weight' has invalid ggml type 43"};
    write_layout_fixture(unknown.path, 43, 576);
    out.push_back(unknown);
    // Q4_K (id 12, 144 bytes a block) of 512 weights: 288 bytes in 256-weight blocks, 576 in a
    // fork's 128-weight blocks.
    LoadFixture fork{"fork-block-size", dir.file("fork-block-size.gguf"), "does_not_load", 1, "offset_mismatch", "output_norm.weight",
                     "tensor 'output_norm.weight' has offset 576, expected 288",
                     "quantized by a llama.cpp fork: type id 12 here has a 128-weight block, the linked ggml's (q4_K) has 256; load it with "
                     "that fork, or requantize from the original weights with the linked llama.cpp",
                     "tensor 'output_norm.weight' has offset 576, expected 288"};
    write_layout_fixture(fork.path, 12, 576);
    out.push_back(fork);
    return out;
}

std::vector<OllamaFixture> ollama_fixtures(const TempDir& dir) {
    std::vector<OllamaFixture> out = {
        {demo_file("ollama-gemma3.gguf"), "loads_after_compat", "missing_key"},
        {demo_file("ollama-qwen25vl.gguf"), "loads_after_compat", "unknown_architecture"},
    };
    const std::pair<const char*, TinyModel> tiny[] = {
        {"tiny-gemma3-ollama.gguf", tiny_gemma3(TinyLayout::ollama)},
        {"tiny-lfm2-ollama.gguf", tiny_lfm2(TinyLayout::ollama)},
        {"tiny-gptoss-ollama.gguf", tiny_gptoss(TinyLayout::ollama)},
        {"tiny-llama3-ollama.gguf", tiny_llama3(TinyLayout::ollama)},
    };
    // The llama3 shim only fills in metadata llama.cpp does without: it loads as it is.
    const char* verdict[] = {"loads_after_compat", "loads_after_compat", "loads_after_compat", "loads"};
    const char* first_problem[] = {"missing_key", "missing_tensor", "unknown_architecture", ""};
    for (size_t i = 0; i < std::size(tiny); ++i) {
        const std::string path = dir.file(tiny[i].first);
        write_tiny_model(tiny[i].second, path);
        out.push_back({path, verdict[i], first_problem[i]});
    }
    for (const OllamaArchModel& m : ollama_arch_models()) {
        m.gguf.write(dir, m.name);
        out.push_back({dir.file(m.name), m.verdict, m.first_problem});
    }
    return out;
}

}  // namespace mlens::test
