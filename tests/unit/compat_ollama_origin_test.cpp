// Ollama origin (ollama_origin.h): no file of llama.cpp's own — the vocabulary GGUFs shipped in the
// pinned source, files written through ggml's gguf API with upstream-shaped keys, a file
// llama_model_quantize wrote — gives evidence, even where the shim's rules would rewrite it; every
// kind of evidence is found in an Ollama-format file, and Ollama's sorted key order counts in both
// of its forms.
#include <gguf.h>
#include <llama.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "compat_fixture.h"
#include "mlens/compat/ollama_origin.h"
#include "mlens/formats/gguf_reader.h"
#include "tiny_models.h"

using namespace mlens;
using namespace mlens::compat;
using namespace mlens::test;

namespace {

// A GGUF written through ggml's own gguf API (gguf_init_empty, gguf_set_*, gguf_add_tensor,
// gguf_write_to_file), keys in the order added. It starts the way llama.cpp's converter does:
// general.architecture, general.type, general.name, then the common hyperparameters in the
// converter's order; tensors are F32 zeros.
class GgmlGguf {
public:
    explicit GgmlGguf(const std::string& arch) : m_gguf(gguf_init_empty()), m_data(ggml_init({32u << 20, nullptr, false})) {
        str("general.architecture", arch).str("general.type", "model").str("general.name", "upstream " + arch);
        if (arch == "clip") return;
        u32(arch + ".block_count", 1).u32(arch + ".context_length", 256).u32(arch + ".embedding_length", 8);
        u32(arch + ".feed_forward_length", 16).u32(arch + ".attention.head_count", 2).u32(arch + ".attention.head_count_kv", 1);
        f32(arch + ".rope.freq_base", 10000.0f).f32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
    }
    ~GgmlGguf() {
        gguf_free(m_gguf);
        ggml_free(m_data);
    }
    GgmlGguf(const GgmlGguf&) = delete;
    GgmlGguf& operator=(const GgmlGguf&) = delete;

    GgmlGguf& str(const std::string& k, const std::string& v) { return gguf_set_val_str(m_gguf, k.c_str(), v.c_str()), *this; }
    GgmlGguf& u32(const std::string& k, uint32_t v) { return gguf_set_val_u32(m_gguf, k.c_str(), v), *this; }
    GgmlGguf& f32(const std::string& k, float v) { return gguf_set_val_f32(m_gguf, k.c_str(), v), *this; }
    GgmlGguf& boolean(const std::string& k, bool v) { return gguf_set_val_bool(m_gguf, k.c_str(), v), *this; }
    GgmlGguf& i32s(const std::string& k, const std::vector<int32_t>& v) {
        return gguf_set_arr_data(m_gguf, k.c_str(), GGUF_TYPE_INT32, v.data(), v.size()), *this;
    }
    GgmlGguf& u8s(const std::string& k, const std::vector<uint8_t>& v) {
        return gguf_set_arr_data(m_gguf, k.c_str(), GGUF_TYPE_UINT8, v.data(), v.size()), *this;
    }
    GgmlGguf& strs(const std::string& k, const std::vector<std::string>& v) {
        std::vector<const char*> p;
        for (const std::string& s : v) p.push_back(s.c_str());
        return gguf_set_arr_str(m_gguf, k.c_str(), p.data(), p.size()), *this;
    }
    // The tokenizer keys after general.file_type and general.quantization_version, as the converter
    // writes them: a vocabulary of `n` tokens with `specials` placed at their ids.
    GgmlGguf& vocab(const std::string& model, const std::string& pre, size_t n = 8,
                    const std::vector<std::pair<size_t, std::string>>& specials = {}, uint32_t bos = 1, uint32_t eos = 2) {
        u32("general.file_type", 0).u32("general.quantization_version", 2).str("tokenizer.ggml.model", model);
        if (!pre.empty()) str("tokenizer.ggml.pre", pre);
        std::vector<std::string> tokens(n, "t");
        for (const auto& [id, text] : specials) tokens[id] = text;
        return strs("tokenizer.ggml.tokens", tokens).u32("tokenizer.ggml.bos_token_id", bos).u32("tokenizer.ggml.eos_token_id", eos);
    }
    GgmlGguf& tensor(const std::string& name, int64_t ne0, int64_t ne1 = 1) {
        ggml_tensor* t = ne1 == 1 ? ggml_new_tensor_1d(m_data, GGML_TYPE_F32, ne0) : ggml_new_tensor_2d(m_data, GGML_TYPE_F32, ne0, ne1);
        ggml_set_name(t, name.c_str());
        std::memset(t->data, 0, ggml_nbytes(t));
        gguf_add_tensor(m_gguf, t);
        return *this;
    }
    Model write(const TempDir& dir, const std::string& name) {
        REQUIRE(gguf_write_to_file(m_gguf, dir.file(name).c_str(), false));
        auto m = open_gguf(dir.file(name));
        REQUIRE(m);
        REQUIRE_FALSE(m->partial);
        return std::move(m).value();
    }

private:
    gguf_context* m_gguf;
    ggml_context* m_data;
};

bool shim_fired(const SidePlan& side, const std::string& rule) {
    for (const DetectionCheck& c : side.checks)
        if (c.rule == rule && c.fired) return true;
    return false;
}

}  // namespace

TEST_CASE("no vocabulary GGUF of the llama.cpp source gives evidence of Ollama origin", "[compat][origin]") {
    auto files = upstream_vocab_files();
    REQUIRE(files.size() >= 19);
    for (const std::string& path : files) {
        INFO(path);
        auto m = open_gguf(path);
        REQUIRE(m);
        OllamaOrigin origin = detect_ollama_origin(*m);
        CHECK_FALSE(origin.ollama_made());
        CHECK(origin.summary() == "no evidence that Ollama made this file");
    }
}

TEST_CASE("files written through ggml's gguf API with upstream-shaped keys give no evidence", "[compat][origin]") {
    TempDir dir;
    std::vector<Model> models;
    const std::vector<std::pair<size_t, std::string>> llama3 = {{128006, "<|start_header_id|>"}, {128009, "<|eot_id|>"}};
    // Llama-3 as converted from the base model: eos 128001, the shim's Llama-3 fix would fire.
    models.push_back(GgmlGguf("llama")
                         .vocab("gpt2", "llama-bpe", 128256, llama3, 128000, 128001)
                         .tensor("token_embd.weight", 8, 128256)
                         .tensor("blk.0.attn_norm.weight", 8)
                         .tensor("output_norm.weight", 8)
                         .write(dir, "llama3.gguf"));
    CHECK(shim_fired(plan_compat(models.back()).text, "handle_llama3_metadata"));
    models.push_back(GgmlGguf("gemma3")
                         .u32("gemma3.attention.key_length", 4)
                         .f32("gemma3.rope.freq_base_swa", 10000.0f)
                         .vocab("llama", "default")
                         .tensor("token_embd.weight", 8, 8)
                         .tensor("blk.0.attn_q.weight", 8, 8)
                         .tensor("output_norm.weight", 8)
                         .write(dir, "gemma3.gguf"));
    models.push_back(GgmlGguf("clip")
                         .boolean("clip.has_vision_encoder", true)
                         .str("clip.projector_type", "gemma3")
                         .tensor("v.patch_embd.weight", 8, 8)
                         .tensor("mm.input_projection.weight", 8, 8)
                         .write(dir, "mmproj.gguf"));
    // A LLaVA mmproj without a projector type: the shim's LLaVA default would fire.
    models.push_back(GgmlGguf("clip")
                         .boolean("clip.has_vision_encoder", true)
                         .tensor("v.patch_embd.weight", 8, 8)
                         .tensor("mm.0.weight", 8, 8)
                         .write(dir, "llava-mmproj.gguf"));
    CHECK_FALSE(plan_compat(models.back()).clip.empty());
    models.push_back(GgmlGguf("gemma3n")
                         .vocab("llama", "default", 10)
                         .tensor("token_embd.weight", 8, 10)
                         .tensor("per_layer_token_embd.weight", 4, 10)
                         .write(dir, "gemma3n.gguf"));
    models.push_back(GgmlGguf("gemma4").vocab("gemma4", "gemma4").tensor("token_embd.weight", 8, 8).write(dir, "gemma4.gguf"));
    models.push_back(GgmlGguf("bert")
                         .vocab("t5", "")
                         .u8s("tokenizer.ggml.precompiled_charsmap", {1, 2, 3, 4})
                         .tensor("token_embd.weight", 8, 8)
                         .write(dir, "snowflake.gguf"));
    // qwen35moe.feed_forward_length is written by the base converter; the shim's detector fires on it.
    models.push_back(GgmlGguf("qwen35moe")
                         .u32("qwen35moe.expert_feed_forward_length", 4)
                         .i32s("qwen35moe.rope.dimension_sections", {11, 11, 10, 0})
                         .vocab("gpt2", "qwen35")
                         .tensor("blk.0.ssm_dt.bias", 2)
                         .tensor("blk.1.nextn.eh_proj.weight", 16, 8)
                         .write(dir, "qwen35moe.gguf"));
    CHECK(shim_fired(plan_compat(models.back()).text, "handle_qwen35moe"));
    models.push_back(GgmlGguf("qwen3vl")
                         .i32s("qwen3vl.rope.dimension_sections", {24, 20, 20, 0})
                         .vocab("gpt2", "qwen2")
                         .tensor("token_embd.weight", 8, 8)
                         .write(dir, "qwen3vl.gguf"));
    models.push_back(GgmlGguf("qwen3next").vocab("gpt2", "qwen2").tensor("blk.0.ssm_dt.bias", 2).write(dir, "qwen3next.gguf"));
    models.push_back(GgmlGguf("lfm2").vocab("gpt2", "lfm2").tensor("token_embd_norm.weight", 8).write(dir, "lfm2.gguf"));
    models.push_back(GgmlGguf("mistral3")
                         .f32("mistral3.rope.scaling.yarn_beta_fast", 32.0f)
                         .vocab("gpt2", "tekken")
                         .tensor("token_embd.weight", 8, 8)
                         .write(dir, "mistral3.gguf"));
    models.push_back(GgmlGguf("llama4").vocab("gpt2", "llama4").tensor("token_embd.weight", 8, 8).write(dir, "llama4.gguf"));
    models.push_back(GgmlGguf("nemotron_h_moe").vocab("gpt2", "").tensor("blk.0.ffn_latent_down.weight", 8, 4).write(dir, "nemotron.gguf"));
    models.push_back(GgmlGguf("laguna").vocab("gpt2", "").tensor("blk.0.attn_gate.weight", 8, 2).write(dir, "laguna.gguf"));
    for (const char* arch : {"gpt-oss", "olmo2", "qwen2vl", "deepseek2", "deepseek2-ocr", "glm4", "nemotron_h"})
        models.push_back(GgmlGguf(arch).vocab("gpt2", "").tensor("token_embd.weight", 8, 8).write(dir, std::string(arch) + ".gguf"));
    for (const Model& m : models) {
        INFO(m.files.front().path);
        CHECK(detect_ollama_origin(m).summary() == "no evidence that Ollama made this file");
    }
}

TEST_CASE("a file llama_model_quantize wrote gives no evidence", "[compat][origin]") {
    TempDir dir;
    write_tiny_model(tiny_llama3(TinyLayout::upstream), dir.file("f32.gguf"));
    llama_backend_init();
    llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
    llama_model_quantize_params params = llama_model_quantize_default_params();
    params.ftype = LLAMA_FTYPE_MOSTLY_Q8_0;
    params.nthread = 1;
    REQUIRE(llama_model_quantize(dir.file("f32.gguf").c_str(), dir.file("q8.gguf").c_str(), &params) == 0);
    auto m = open_gguf(dir.file("q8.gguf"));
    REQUIRE(m);
    CHECK(m->get_uint("general.file_type") == uint64_t{LLAMA_FTYPE_MOSTLY_Q8_0});
    CHECK_FALSE(detect_ollama_origin(*m).ollama_made());
}

TEST_CASE("every kind of evidence is found in an Ollama-format file, with its reason", "[compat][origin]") {
    TempDir dir;
    const std::string eps = "gemma3.attention.layer_norm_rms_epsilon";
    std::vector<std::pair<OllamaGguf, std::string>> cases = {
        {OllamaGguf("gemma3").f32(eps, 1e-6f).tensor("v.patch_embedding.weight", {8, 8}),
         "gemma3: tensor v.patch_embedding.weight (prefix v.)"},
        {OllamaGguf("gemma3").f32(eps, 1e-6f).tensor("mm.mm_input_projection.weight", {8, 8}),
         "gemma3: tensor mm.mm_input_projection.weight (prefix mm.)"},
        {OllamaGguf("gemma3").f32(eps, 1e-6f).tensor("dense.0.weight", {8, 8}), "gemma3: tensor dense.0.weight"},
        {OllamaGguf("gemma3").f32(eps, 1e-6f).u32("gemma3.mm.tokens_per_image", 256), "gemma3: KV gemma3.mm.tokens_per_image"},
        {OllamaGguf("gemma3").f32(eps, 1e-6f).f32("gemma3.rope.global.freq_base", 1e6f), "gemma3: KV gemma3.rope.global.freq_base"},
        {OllamaGguf("gemma3").f32(eps, 1e-6f).boolean("tokenizer.ggml.add_unknown_token", false),
         "gemma3: KV tokenizer.ggml.add_unknown_token"},
        {OllamaGguf("gemma3"), "gemma3: KV gemma3.attention.layer_norm_rms_epsilon missing"},
        {OllamaGguf("gemma3n").tensor("token_embd.weight", {8, 6}).tensor("per_layer_token_embd.weight", {4, 5}),
         "gemma3n: token_embd.weight with 6 rows and per_layer_token_embd.weight with 5"},
        {OllamaGguf("gemma4").str("tokenizer.ggml.model", "llama"), "gemma4: tokenizer.ggml.model \"llama\""},
        {OllamaGguf("gemma4").tensor("a.blk.0.ln1.weight", {8}), "gemma4: tensor a.blk.0.ln1.weight (prefix a.)"},
        {OllamaGguf("bert").kv("tokenizer.ggml.precompiled_charsmap", array_strings({"A", "B"})),
         "bert: tokenizer.ggml.precompiled_charsmap as a STRING array"},
        {OllamaGguf("qwen35").boolean("qwen35.rope.mrope_interleaved", true), "qwen35: KV qwen35.rope.mrope_interleaved"},
        {OllamaGguf("qwen35moe").tensor("mtp.fc.weight", {8, 8}), "qwen35moe: tensor mtp.fc.weight (prefix mtp.)"},
        {OllamaGguf("qwen3next").tensor("blk.0.ssm_dt", {2}), "qwen3next: tensor blk.0.ssm_dt (ends .ssm_dt)"},
        {OllamaGguf("qwen3vlmoe"), "qwen3vlmoe: KV qwen3vlmoe.rope.dimension_sections missing"},
        {OllamaGguf("laguna").tensor("blk.0.attn_g.weight", {8, 2}), "laguna: tensor blk.0.attn_g.weight"},
        {OllamaGguf("lfm2").tensor("output_norm.weight", {8}), "lfm2: tensor output_norm.weight"},
        {OllamaGguf("mistral3").f32("mistral3.rope.scaling_beta", 0.1f), "mistral3: KV mistral3.rope.scaling_beta"},
        {OllamaGguf("llama4").tensor("mm.linear_1.weight", {8, 8}), "llama4: tensor mm.linear_1.weight (prefix mm.)"},
        {OllamaGguf("nemotron_h_moe").tensor("blk.1.ffn_latent_in.weight", {8, 4}),
         "nemotron_h_moe: tensor blk.1.ffn_latent_in.weight (prefix blk.1.ffn_latent_in)"},
        {OllamaGguf("qwen2").str("qwen2.source_quantization", "hf_fp8"), "qwen2: KV qwen2.source_quantization"},
    };
    for (const char* arch : {"gptoss", "olmo3", "qwen25vl", "glm4moelite", "deepseekocr", "glmocr", "nemotron_h_omni"})
        cases.emplace_back(OllamaGguf(arch), std::string(arch) + ": architecture name " + arch);
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i].second);
        Model m = cases[i].first.write(dir, "case" + std::to_string(i) + ".gguf");
        OllamaOrigin origin = detect_ollama_origin(m);
        CHECK(origin.summary() == "Ollama-made: " + cases[i].second);
        REQUIRE(origin.evidence.size() == 1);
        CHECK_FALSE(origin.evidence[0].reason.empty());
    }
}

TEST_CASE("Ollama's sorted key order is evidence in both of its forms, with an architecture and eight keys", "[compat][origin]") {
    TempDir dir;
    auto keys = [](OllamaGguf g, size_t n_hparams) {
        g.u32("general.file_type", 1).u32("general.quantization_version", 2).str("tokenizer.ggml.model", "gpt2");
        const char* hparams[] = {"qwen2.block_count", "qwen2.context_length", "qwen2.embedding_length", "qwen2.vocab_size"};
        for (size_t i = 0; i < n_hparams; ++i) g.u32(hparams[i], 8);
        return g.str("tokenizer.ggml.pre", "qwen2");
    };
    // Ollama at HEAD: sorted by the key without "qwen2.", so the hyperparameters come first.
    Model head = keys(OllamaGguf("qwen2"), 4).sorted_keys().write(dir, "head.gguf");
    CHECK(stored_keys(head) ==
          std::vector<std::string>{"qwen2.block_count", "qwen2.context_length", "qwen2.embedding_length", "general.architecture",
                                   "general.file_type", "general.quantization_version", "tokenizer.ggml.model", "tokenizer.ggml.pre",
                                   "qwen2.vocab_size"});
    OllamaOrigin origin = detect_ollama_origin(head);
    CHECK(origin.summary() == "Ollama-made: qwen2: all 9 keys in sorted order, as Ollama's GGUF writer writes them");
    // Older Ollama: sorted by the full key.
    Model legacy = OllamaGguf("qwen2")
                       .u32("general.file_type", 1)
                       .u32("general.quantization_version", 2)
                       .u32("qwen2.block_count", 8)
                       .u32("qwen2.context_length", 8)
                       .u32("qwen2.embedding_length", 8)
                       .u32("qwen2.vocab_size", 8)
                       .str("tokenizer.ggml.model", "gpt2")
                       .str("tokenizer.ggml.pre", "qwen2")
                       .write(dir, "legacy.gguf");
    CHECK(detect_ollama_origin(legacy).summary() == "Ollama-made: qwen2: all 9 keys in sorted order, as Ollama's GGUF writer writes them");
    // The same keys in the order they were added (upstream's way) are no evidence.
    CHECK_FALSE(detect_ollama_origin(keys(OllamaGguf("qwen2"), 4).write(dir, "added.gguf")).ollama_made());
    // Nor do sorted keys without an architecture.
    CHECK_FALSE(detect_ollama_origin(keys(OllamaGguf(""), 4).sorted_keys().write(dir, "no-arch.gguf")).ollama_made());
    // Seven keys in order do not count.
    Model seven = keys(OllamaGguf("qwen2"), 2).sorted_keys().write(dir, "seven.gguf");
    REQUIRE(seven.metadata.size() == kMinSortedKeys - 1);
    CHECK_FALSE(detect_ollama_origin(seven).ollama_made());
}

TEST_CASE("mlens compat says Ollama-made only on evidence, and names it", "[compat][origin]") {
    const std::string vocab = llama_source_dir() + "/models/ggml-vocab-llama-bpe.gguf";
    CliRun upstream = run_mlens({"compat", vocab});
    CHECK(upstream.exit_status == 0);
    CHECK(upstream.out.rfind("origin: no evidence that Ollama made this file; inference loads it as it is, without the text "
                             "edits below\ntext loader view: architecture llama\n  handlers fired: handle_llama3_metadata\n",
                             0) == 0);
    CliRun upstream_json = run_mlens({"compat", vocab, "--json"});
    REQUIRE(upstream_json.exit_status == 0);
    auto j = nlohmann::json::parse(upstream_json.out);
    CHECK(j["origin"] == nlohmann::json({{"ollama_made", false}, {"evidence", nlohmann::json::array()}}));
    CHECK(j["empty"] == false);

    TempDir dir;
    OllamaGguf("gptoss").u32("gptoss.block_count", 1).write(dir);
    CliRun ollama = run_mlens({"compat", dir.file("model.gguf")});
    CHECK(ollama.exit_status == 0);
    CHECK(ollama.out.rfind("origin: Ollama-made\n  evidence: gptoss: architecture name gptoss (not an architecture of llama.cpp "
                           "or gguf-py; Ollama's converters name it so)\n",
                           0) == 0);
    CliRun ollama_json = run_mlens({"compat", dir.file("model.gguf"), "--json"});
    REQUIRE(ollama_json.exit_status == 0);
    auto o = nlohmann::json::parse(ollama_json.out)["origin"];
    CHECK(o["ollama_made"] == true);
    REQUIRE(o["evidence"].size() == 1);
    CHECK(o["evidence"][0]["marker"] == "gptoss: architecture name gptoss");
}
