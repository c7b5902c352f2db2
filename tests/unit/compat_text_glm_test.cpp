// Text-side compat rules for glm4moelite, deepseekocr, glmocr and the nemotron_h family
// (spec §1.4), and `mlens compat --json` on one fixture.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "compat_fixture.h"

using namespace mlens;
using namespace mlens::compat;
using namespace mlens::test;

TEST_CASE("glm4moelite: deepseek2 MLA conventions and EOG ids", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("glm4moelite")
                  .u32("glm4moelite.attention.head_count_kv", 20)
                  .u32("glm4moelite.attention.kv_lora_rank", 512)
                  .u32("glm4moelite.attention.key_length", 256)
                  .u32("glm4moelite.rope.dimension_count", 64)
                  .kv("tokenizer.ggml.eos_token_ids", array_i32({-1, 154820, 154827, 154829}))
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.arch_after == "deepseek2");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"general.architecture", "deepseek2.attention.kv_lora_rank", "deepseek2.rope.dimension_count",
                              "deepseek2.attention.head_count_kv", "deepseek2.attention.key_length", "deepseek2.attention.value_length",
                              "deepseek2.attention.key_length_mla", "deepseek2.attention.value_length_mla", "deepseek2.expert_group_count",
                              "deepseek2.expert_group_used_count", "tokenizer.ggml.pre", "tokenizer.ggml.eot_token_id",
                              "tokenizer.ggml.eom_token_id"})));
    CHECK(typed(result_value(m, t, "deepseek2.attention.head_count_kv")) == "UINT32 1");
    CHECK(typed(result_value(m, t, "deepseek2.attention.key_length")) == "UINT32 576");
    CHECK(typed(result_value(m, t, "deepseek2.attention.value_length")) == "UINT32 512");
    CHECK(typed(result_value(m, t, "deepseek2.attention.key_length_mla")) == "UINT32 256");
    CHECK(typed(result_value(m, t, "deepseek2.attention.value_length_mla")) == "UINT32 256");
    CHECK(typed(result_value(m, t, "deepseek2.expert_group_count")) == "UINT32 1");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.pre")) == "STRING glm4");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.eot_token_id")) == "UINT32 154827");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.eom_token_id")) == "UINT32 154829");
}

TEST_CASE("deepseekocr: deepseek2-ocr with derived expert sizes, SAM and vision hidden", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("deepseekocr")
                  .u32("deepseekocr.block_count", 2)
                  .tensor("blk.1.ffn_down_exps.weight", {32, 8, 4})
                  .tensor("blk.1.ffn_down_shexp.weight", {64, 8})
                  .tensor("s.blk.0.norm1.weight", {8})
                  .tensor("v.blk.0.layer_norm1.weight", {8})
                  .tensor("mm.layers.weight", {8, 8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"general.architecture", "deepseek2-ocr.block_count", "deepseek2-ocr.attention.layer_norm_rms_epsilon",
                              "deepseek2-ocr.expert_feed_forward_length", "deepseek2-ocr.expert_shared_count"})));
    CHECK(typed(result_value(m, t, "deepseek2-ocr.attention.layer_norm_rms_epsilon")) == "FLOAT32 1e-06");
    CHECK(typed(result_value(m, t, "deepseek2-ocr.expert_feed_forward_length")) == "UINT32 32");
    CHECK(typed(result_value(m, t, "deepseek2-ocr.expert_shared_count")) == "UINT32 2");
    CHECK(
        result_tensors(m, t) ==
        strings({"blk.1.ffn_down_exps.weight F32 [32,8,4]", "blk.1.ffn_down_shexp.weight F32 [64,8]", "s.blk.0.norm1.weight F32 [8] hidden",
                 "v.blk.0.layer_norm1.weight F32 [8] hidden", "mm.layers.weight F32 [8,8] hidden"}));
}

TEST_CASE("glmocr: glm4 keys, chatglm-bpe, renames, gate‖up fused, gates hidden", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("glmocr")
                  .u32("glmocr.block_count", 2)
                  .u32("glmocr.attention.key_length", 64)
                  .kv("glmocr.rope.mrope_section", array_i32({8, 12, 12}))
                  .str("tokenizer.ggml.pre", "llama-bpe")
                  .tensor("blk.0.attn_out.weight", {8, 8})
                  .tensor("blk.0.ffn_gate.weight", {8, 16})
                  .tensor("blk.0.ffn_up.weight", {8, 16})
                  .tensor("blk.0.post_attn_norm.weight", {8})
                  .tensor("blk.0.post_ffn_norm.weight", {8})
                  .tensor("blk.1.ffn_up.weight", {8, 16})
                  .tensor("v.patch_embd_0.weight", {8, 8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.arch_after == "glm4");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"general.architecture", "glm4.block_count", "glm4.attention.key_length", "glm4.rope.mrope_section",
                              "glm4.rope.dimension_sections", "glm4.rope.dimension_count", "tokenizer.ggml.pre"})));
    CHECK(typed(result_value(m, t, "glm4.rope.dimension_sections")) == "ARRAY[INT32] [INT32 × 4] 8, 12, 12, 0");
    CHECK(typed(result_value(m, t, "glm4.rope.dimension_count")) == "UINT32 64");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.pre")) == "STRING chatglm-bpe");
    CHECK(result_tensors(m, t) ==
          strings({"blk.0.attn_output.weight F32 [8,8]", "blk.0.ffn_gate.weight F32 [8,16] hidden",
                   "blk.0.ffn_up.weight F32 [8,32] op=byte concat", "blk.0.post_attention_norm.weight F32 [8]",
                   "blk.0.post_ffw_norm.weight F32 [8]", "blk.1.ffn_up.weight F32 [8,16]", "v.patch_embd_0.weight F32 [8,8] hidden"}));
    REQUIRE(t.data_ops.size() == 1);
    CHECK(t.data_ops[0].sources == std::vector<size_t>{1, 2});
    CHECK(t.no_mmap);
}

TEST_CASE("nemotron_h_omni: moe text arch, copied keys, latent renames, MTP hidden", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("nemotron_h_omni")
                  .u32("nemotron_h_omni.block_count", 2)
                  .u32("nemotron_h_omni.expert_count", 4)
                  .u32("nemotron_h_omni.vision.block_count", 3)
                  .u32("nemotron_h_omni.audio.block_count", 3)
                  .tensor("blk.0.ffn_latent_in.weight", {8, 4})
                  .tensor("blk.0.ffn_latent_out.weight", {4, 8})
                  .tensor("a.blk.0.x.weight", {8})
                  .tensor("mtp.layers.0.mixer.experts.0.up_proj.weight", {8, 8})
                  .tensor("v.patch_embd.weight", {8, 8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.handlers == strings({"handle_nemotron_h_omni", "handle_nemotron_h_moe", "handle_nemotron_h_moe"}));
    CHECK(t.arch_after == "nemotron_h_moe");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"general.architecture", "nemotron_h_moe.block_count", "nemotron_h_moe.expert_count",
                              "nemotron_h_moe.moe_latent_size"})));
    CHECK(typed(result_value(m, t, "nemotron_h_moe.moe_latent_size")) == "UINT32 4");
    CHECK(result_tensors(m, t) ==
          strings({"blk.0.ffn_latent_down.weight F32 [8,4]", "blk.0.ffn_latent_up.weight F32 [4,8]", "a.blk.0.x.weight F32 [8] hidden",
                   "mtp.layers.0.mixer.experts.0.up_proj.weight F32 [8,8] hidden", "v.patch_embd.weight F32 [8,8] hidden"}));
}

TEST_CASE("nemotron_h_omni: dense variant becomes nemotron_h", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("nemotron_h_omni").u32("nemotron_h_omni.block_count", 2).tensor("mm.norm.weight", {8}).write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.handlers == strings({"handle_nemotron_h_omni"}));
    CHECK(result_keys(m, t) == keys_after(m, strings({"general.architecture", "nemotron_h.block_count"})));
    CHECK(result_tensors(m, t) == strings({"mm.norm.weight F32 [8] hidden"}));
}

TEST_CASE("mlens compat --json lists every edit of a gptoss file", "[compat]") {
    TempDir dir;
    OllamaGguf("gptoss")
        .u32("gptoss.block_count", 1)
        .tensor("blk.0.attn_out.weight", {8, 8})
        .tensor("blk.0.ffn_gate_exps.weight", {8, 6, 2})
        .write(dir);
    CliRun run = run_mlens({"compat", dir.file("model.gguf"), "--json"});
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    auto j = nlohmann::json::parse(run.out);
    CHECK(j["empty"] == false);
    const auto& text = j["text"];
    CHECK(text["handlers"] == nlohmann::json::array({"handle_gptoss"}));
    CHECK(text["arch_after"] == "gpt-oss");
    REQUIRE(text["kv_edits"].size() == 5);
    CHECK(text["kv_edits"][0]["key"] == "general.architecture");
    CHECK(text["kv_edits"][0]["kind"] == "changed");
    CHECK(text["kv_edits"][0]["result"]["value"] == "gpt-oss");
    CHECK(text["kv_edits"][0]["previous"]["value"] == "gptoss");
    CHECK(text["kv_edits"][1]["op"] == "copy");
    CHECK(text["kv_edits"][1]["source_key"] == "gptoss.block_count");
    CHECK(text["kv_edits"][2]["key"] == "gpt-oss.expert_feed_forward_length");
    CHECK(text["kv_edits"][2]["result"]["type"] == "UINT32");
    CHECK(text["kv_edits"][2]["result"]["value"] == 6);
    CHECK(text["kv_edits"][4]["key"] == "tokenizer.ggml.pre");
    CHECK(text["kv_edits"][4]["kind"] == "injected");
    REQUIRE(text["tensor_edits"].size() == 1);
    CHECK(text["tensor_edits"][0]["new_name"] == "blk.0.attn_output.weight");
    CHECK(text["tensor_edits"][0]["rule"] == "handle_gptoss");
    CHECK(text["counts"]["injected"] == 4);
    CHECK(text["counts"]["changed"] == 1);
    CHECK(text["counts"]["renamed"] == 1);

    CliRun human = run_mlens({"compat", dir.file("model.gguf")});
    CHECK(human.exit_status == 0);
    CHECK(human.out.find("rename blk.0.attn_out.weight → blk.0.attn_output.weight  [handle_gptoss]") != std::string::npos);
    CHECK(human.out.find("summary: text: 4 injected, 1 changed, 1 renamed; clip: no edits") != std::string::npos);

    CliRun missing = run_mlens({"compat", dir.file("absent.gguf")});
    CHECK(missing.exit_status == 1);
    CliRun usage = run_mlens({"compat"});
    CHECK(usage.exit_status == 2);
}
