// Text-side compat rules for renamed architectures and metadata fixes (spec §1.4): snowflake,
// laguna, gptoss, lfm2, olmo3, mistral3, Llama-3, llama4.
#include <catch2/catch.hpp>

#include "compat_fixture.h"
#include "mlens/compat/ollama_origin.h"

using namespace mlens;
using namespace mlens::compat;
using namespace mlens::test;

TEST_CASE("snowflake: the base64 charsmap becomes a UINT8 array", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("bert")
                  .str("tokenizer.ggml.model", "t5")
                  .kv("tokenizer.ggml.precompiled_charsmap", array_strings({"A", "A", "E", "C", "/", "w", "=", "="}))
                  .tensor("token_embd.weight", {8, 4})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.handlers == strings({"handle_snowflake_arctic_embed2"}));
    CHECK(result_keys(m, t) == keys_after(m, strings({"tokenizer.ggml.precompiled_charsmap"})));
    CHECK(typed(result_value(m, t, "tokenizer.ggml.precompiled_charsmap")) == "ARRAY[UINT8] [UINT8 × 4] 0, 1, 2, 255");
}

TEST_CASE("snowflake: a multi-character entry stops the fix with an issue", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("bert")
                  .str("tokenizer.ggml.model", "t5")
                  .kv("tokenizer.ggml.precompiled_charsmap", array_strings({"A", "AB"}))
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.empty());
    REQUIRE(t.issues.size() == 1);
    CHECK(t.issues[0].rule == "handle_snowflake_arctic_embed2");
    CHECK(t.issues[0].message == "tokenizer.ggml.precompiled_charsmap entry 1 is not exactly one character: the shim aborts the fix");
}

TEST_CASE("laguna: swa keys copied, attn_g renamed", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("laguna")
                  .u32("laguna.rope.swa.dimension_count", 64)
                  .f32("laguna.rope.swa.freq_base", 10000.0f)
                  .tensor("blk.0.attn_g.weight", {8, 8})
                  .tensor("blk.0.attn_g.weight.x", {8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(result_keys(m, t) == keys_after(m, strings({"laguna.rope.dimension_count_swa", "laguna.rope.freq_base_swa"})));
    CHECK(typed(result_value(m, t, "laguna.rope.dimension_count_swa")) == "UINT32 64");
    CHECK(typed(result_value(m, t, "laguna.rope.freq_base_swa")) == "FLOAT32 10000");
    CHECK(result_tensors(m, t) == strings({"blk.0.attn_gate.weight F32 [8,8]", "blk.0.attn_g.weight.x F32 [8]"}));
}

TEST_CASE("gptoss: gpt-oss keys, expert ff length, yarn, gpt-4o, tensor renames", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("gptoss")
                  .u32("gptoss.block_count", 1)
                  .u32("gptoss.context_length", 4096)
                  .str("tokenizer.ggml.pre", "default")
                  .tensor("blk.0.attn_out.weight", {8, 8}, kF16)
                  .tensor("blk.0.attn_sinks", {4})
                  .tensor("blk.0.ffn_norm.weight", {8})
                  .tensor("blk.0.ffn_gate_exps.weight", {8, 6, 2}, kF16)
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.arch_after == "gpt-oss");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"general.architecture", "gpt-oss.block_count", "gpt-oss.context_length", "gpt-oss.expert_feed_forward_length",
                              "gpt-oss.rope.scaling.type", "tokenizer.ggml.pre"})));
    CHECK(typed(result_value(m, t, "general.architecture")) == "STRING gpt-oss");
    CHECK(typed(result_value(m, t, "gptoss.block_count")) == "UINT32 1");
    CHECK(typed(result_value(m, t, "gpt-oss.expert_feed_forward_length")) == "UINT32 6");
    CHECK(typed(result_value(m, t, "gpt-oss.rope.scaling.type")) == "STRING yarn");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.pre")) == "STRING gpt-4o");
    CHECK(result_tensors(m, t) ==
          strings({"blk.0.attn_output.weight F16 [8,8]", "blk.0.attn_sinks.weight F32 [4]", "blk.0.post_attention_norm.weight F32 [8]",
                   "blk.0.ffn_gate_exps.weight F16 [8,6,2]"}));
    CHECK(t.skip_prefixes.empty());
}

TEST_CASE("lfm2: output_norm becomes token_embd_norm and the ff length follows the tensor", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("lfm2")
                  .u32("lfm2.feed_forward_length", 12288)
                  .str("tokenizer.ggml.pre", "lfm2")
                  .tensor("blk.0.ffn_gate.weight", {8, 16})
                  .tensor("output_norm.weight", {8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(result_keys(m, t) == keys_after(m, strings({"tokenizer.ggml.pre", "lfm2.feed_forward_length"})));
    CHECK(typed(result_value(m, t, "lfm2.feed_forward_length")) == "UINT32 16");
    CHECK(t.kv_edits[0].kind == EditKind::changed);
    CHECK(result_tensors(m, t) == strings({"blk.0.ffn_gate.weight F32 [8,16]", "token_embd_norm.weight F32 [8]"}));
}

TEST_CASE("olmo3: loaded as olmo2 with copied keys", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("olmo3").u32("olmo3.block_count", 2).f32("olmo3.rope.freq_base", 500000.0f).write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.checks[11].detail == "marker: architecture name olmo3 (Ollama-only)");
    CHECK(result_keys(m, t) == keys_after(m, strings({"general.architecture", "olmo2.block_count", "olmo2.rope.freq_base"})));
    CHECK(typed(result_value(m, t, "olmo2.rope.freq_base")) == "FLOAT32 5e+05");
}

TEST_CASE("mistral3: yarn keys copied with their types, tekken, vision hidden", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("mistral3")
                  .f32("mistral3.rope.scaling.beta_fast", 32.0f)
                  .f32("mistral3.rope.scaling.beta_slow", 1.0f)
                  .u32("mistral3.rope.scaling.mscale_all_dim", 1)
                  .f32("mistral3.rope.scaling_beta", 0.1f)
                  .tensor("blk.0.attn_q.weight", {8, 8})
                  .tensor("v.patch_conv.weight", {8, 8}, kF16)
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.checks[12].detail == "marker: tensor prefix v.");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"mistral3.rope.scaling.yarn_beta_fast", "mistral3.rope.scaling.yarn_beta_slow",
                              "mistral3.rope.scaling.yarn_log_multiplier", "mistral3.attention.temperature_scale", "tokenizer.ggml.pre"})));
    CHECK(typed(result_value(m, t, "mistral3.rope.scaling.yarn_beta_fast")) == "FLOAT32 32");
    CHECK(typed(result_value(m, t, "mistral3.rope.scaling.yarn_log_multiplier")) == "UINT32 1");
    CHECK(typed(result_value(m, t, "mistral3.attention.temperature_scale")) == "FLOAT32 0.1");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.pre")) == "STRING tekken");
    CHECK(result_tensors(m, t) == strings({"blk.0.attn_q.weight F32 [8,8]", "v.patch_conv.weight F16 [8,8] hidden"}));
}

TEST_CASE("llama: the Llama-3 metadata gap is closed", "[compat]") {
    std::vector<std::string> tokens(128010, "t");
    tokens[128009] = "<|eot_id|>";
    TempDir dir;
    Model m = OllamaGguf("llama")
                  .u32("general.file_type", 1)
                  .u32("general.quantization_version", 2)
                  .u32("llama.block_count", 32)
                  .u32("llama.context_length", 8192)
                  .u32("llama.embedding_length", 4096)
                  .kv("tokenizer.ggml.tokens", array_strings(tokens))
                  .str("tokenizer.ggml.pre", "default")
                  .u32("tokenizer.ggml.eos_token_id", 128009)
                  .str("tokenizer.chat_template", "{{ '<|start_header_id|>' }}")
                  .sorted_keys()
                  .write(dir);
    CHECK(detect_ollama_origin(m).summary() == "Ollama-made: llama: all 10 keys in sorted order, as Ollama's GGUF writer writes them");
    const SidePlan t = plan_compat(m).text;
    CHECK(t.checks[19].detail == "marker: Llama-3 vocab with tokenizer.ggml.pre missing or default");
    CHECK(result_keys(m, t) ==
          keys_after(m, strings({"tokenizer.ggml.pre", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eos_token_ids"})));
    CHECK(typed(result_value(m, t, "tokenizer.ggml.pre")) == "STRING llama-bpe");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.eos_token_id")) == "UINT32 128009");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.eot_token_id")) == "UINT32 128009");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.eos_token_ids")) == "ARRAY[INT32] [INT32 × 1] 128009");
}

TEST_CASE("llama4: only the vision tensors are hidden", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("llama4").tensor("blk.0.attn_norm.weight", {8}).tensor("mm.linear_1.weight", {8, 8}).write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.kv_edits.empty());
    CHECK(result_tensors(m, t) == strings({"blk.0.attn_norm.weight F32 [8]", "mm.linear_1.weight F32 [8,8] hidden"}));
}

TEST_CASE("dispatch order: every text and clip rule is checked in the shim's order with its gate", "[compat]") {
    TempDir dir;
    // A plain llama file with vision tensors: no text detector fires, and the clip side tries them all.
    Model m = OllamaGguf("llama").tensor("blk.0.attn_norm.weight", {4}).tensor("v.patch_embd.weight", {4}).write(dir);
    const RewritePlan plan = plan_compat(m);
    std::vector<std::string> text, clip;
    for (const DetectionCheck& c : plan.text.checks) text.push_back(c.rule + " [" + c.arch + "]" + (c.fired ? " fired" : ""));
    for (const DetectionCheck& c : plan.clip.checks) clip.push_back(c.rule + " [" + c.arch + "]" + (c.fired ? " fired" : ""));
    CHECK(text ==
          strings({
              "handle_embeddinggemma [gemma3]",
              "handle_gemma3 [gemma3]",
              "handle_snowflake_arctic_embed2 [bert]",
              "handle_gemma3n [gemma3n]",
              "handle_gemma4 [gemma4]",
              "handle_qwen35moe [qwen35moe]",
              "handle_qwen35 [qwen35]",
              "handle_qwen3next [qwen3next]",
              "handle_laguna [laguna]",
              "handle_gptoss [gptoss]",
              "handle_lfm2 [lfm2]",
              "handle_olmo3 [olmo3]",
              "handle_mistral3 [mistral3]",
              "handle_qwen25vl [qwen25vl]",
              "handle_qwen3vl [qwen3vl, qwen3vlmoe]",
              "handle_glm4moelite [glm4moelite]",
              "handle_deepseekocr [deepseekocr]",
              "handle_nemotron_h_omni [nemotron_h_omni]",
              "handle_nemotron_h_moe [nemotron_h_moe]",
              "handle_llama3_metadata [llama]",
              "handle_llama4 [llama4]",
              "handle_glmocr [glmocr]",
          }));
    CHECK(clip ==
          strings({
              "handle_missing_llava_projector_type [clip]",
              "handle_gemma3_clip [gemma3]",
              "handle_qwen35moe_clip [qwen35moe]",
              "handle_qwen35_clip [qwen35]",
              "handle_mistral3_clip [mistral3]",
              "handle_deepseekocr_clip [deepseekocr]",
              "handle_nemotron_h_omni_clip [nemotron_h_omni]",
              "handle_llama4_clip [llama4]",
              "handle_gemma4_clip [gemma4]",
              "handle_glmocr_clip [glmocr]",
              "handle_qwen25vl_clip [qwen25vl]",
              "handle_qwen3vl_clip [qwen3vl, qwen3vlmoe]",
          }));
}
