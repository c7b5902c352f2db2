// Text-side compat rules for the gemma family (spec §1.4): embeddinggemma, gemma3, gemma3n,
// gemma4 on small Ollama-format files written by our writer; key order, types, values and the
// resulting tensors are checked exactly.
#include <catch2/catch.hpp>

#include "compat_fixture.h"

using namespace mlens;
using namespace mlens::compat;
using namespace mlens::test;

TEST_CASE("gemma3: defaults injected, vocab truncated to the embedding rows, vision hidden", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("gemma3")
                  .u32("gemma3.context_length", 131072)
                  .f32("gemma3.rope.local.freq_base", 10000.0f)
                  .kv("tokenizer.ggml.tokens", array_strings({"<pad>", "<eos>", "a", "b", "<img0>", "<img1>"}))
                  .kv("tokenizer.ggml.scores", array_f32({0, 0, -1, -2, -3, -4}))
                  .kv("tokenizer.ggml.token_type", array_i32({3, 3, 1, 1, 4, 4}))
                  .tensor("token_embd.weight", {8, 4}, kF16)
                  .tensor("blk.0.attn_output.weight", {8, 8}, kF16)
                  .tensor("mm.mm_input_projection.weight", {8, 8}, kF16)
                  .tensor("output_norm.weight", {8})
                  .tensor("v.patch_embedding.weight", {4, 4}, kF16)
                  .write(dir);
    RewritePlan plan = plan_compat(m);
    const SidePlan& t = plan.text;
    CHECK(t.handlers == strings({"handle_gemma3"}));
    CHECK(t.checks[0].rule == "handle_embeddinggemma");
    CHECK_FALSE(t.checks[0].fired);
    CHECK(t.checks[1].detail == "marker: tensor prefix v.");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"gemma3.rope.freq_base_swa", "gemma3.attention.layer_norm_rms_epsilon", "gemma3.rope.freq_base",
                              "tokenizer.chat_template", "gemma3.rope.scaling.type", "gemma3.rope.scaling.factor", "tokenizer.ggml.tokens",
                              "tokenizer.ggml.scores", "tokenizer.ggml.token_type"})));
    CHECK(typed(result_value(m, t, "gemma3.rope.freq_base_swa")) == "FLOAT32 10000");
    CHECK(typed(result_value(m, t, "gemma3.attention.layer_norm_rms_epsilon")) == "FLOAT32 1e-06");
    CHECK(typed(result_value(m, t, "gemma3.rope.freq_base")) == "FLOAT32 1e+06");
    CHECK(typed(result_value(m, t, "gemma3.rope.scaling.type")) == "STRING linear");
    CHECK(typed(result_value(m, t, "gemma3.rope.scaling.factor")) == "FLOAT32 8");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.tokens")) == "ARRAY[STRING] [STRING × 4] <pad>, <eos>, a, b");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.scores")) == "ARRAY[FLOAT32] [FLOAT32 × 4] 0, 0, -1, -2");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.token_type")) == "ARRAY[INT32] [INT32 × 4] 3, 3, 1, 1");
    Value tmpl = result_value(m, t, "tokenizer.chat_template");
    REQUIRE(tmpl.is_string());
    const std::string s = tmpl.string_value();
    CHECK(s.size() == 594);
    CHECK(s.starts_with("{{ bos_token }}{% if messages[0]['role'] == 'system' %}"));
    CHECK(s.find("'<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n'") != std::string::npos);
    CHECK(s.find('\n') == std::string::npos);
    const std::string tail = "{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}";
    CHECK(s.substr(s.size() - tail.size()) == tail);
    CHECK(result_tensors(m, t) ==
          strings({"token_embd.weight F16 [8,4]", "blk.0.attn_output.weight F16 [8,8]", "mm.mm_input_projection.weight F16 [8,8] hidden",
                   "output_norm.weight F32 [8]", "v.patch_embedding.weight F16 [4,4] hidden"}));
    CHECK_FALSE(t.no_mmap);
    CHECK(t.data_ops.empty());
    for (const TensorEdit& e : t.tensor_edits) CHECK(e.kind == EditKind::hidden);
}

TEST_CASE("gemma3: the global/local rope keys are copied and no scaling below 131072", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("gemma3")
                  .u32("gemma3.context_length", 32768)
                  .f32("gemma3.rope.global.freq_base", 500000.0f)
                  .f32("gemma3.rope.local.freq_base", 20000.0f)
                  .f32("gemma3.attention.layer_norm_rms_epsilon", 1e-5f)
                  .str("tokenizer.chat_template", "T")
                  .tensor("token_embd.weight", {8, 4})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.checks[1].detail == "marker: KV gemma3.rope.global.freq_base");
    CHECK(result_keys(m, t) == keys_after(m, strings({"gemma3.rope.freq_base", "gemma3.rope.freq_base_swa"})));
    CHECK(typed(result_value(m, t, "gemma3.rope.freq_base")) == "FLOAT32 5e+05");
    CHECK(typed(result_value(m, t, "gemma3.rope.freq_base_swa")) == "FLOAT32 20000");
    CHECK(t.kv_edits[0].op == KvOp::copy);
    CHECK(t.kv_edits[0].source_key == "gemma3.rope.global.freq_base");
    CHECK(t.kv_edits[0].kind == EditKind::injected);
}

TEST_CASE("gemma3: an upstream gemma3 file is left alone", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("gemma3")
                  .f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f)
                  .f32("gemma3.rope.freq_base", 1e6f)
                  .tensor("token_embd.weight", {8, 4})
                  .write(dir);
    RewritePlan plan = plan_compat(m);
    CHECK(plan.text.empty());
    CHECK(plan.text.handlers.empty());
    CHECK(plan.text.checks[1].detail ==
          "no marker among: KV gemma3.mm.tokens_per_image, tensor prefix v., tensor prefix mm., KV gemma3.rope.global.freq_base, "
          "KV gemma3.rope.local.freq_base, KV tokenizer.ggml.add_padding_token, KV tokenizer.ggml.add_unknown_token, "
          "KV gemma3.attention.layer_norm_rms_epsilon missing");
    CHECK(plan.text.summary().find("handle_gemma3: no marker among") != std::string::npos);
}

TEST_CASE("embeddinggemma: arch switch, prefix copy, removed keys, dense dims and renames", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("gemma3")
                  .u32("gemma3.embedding_length", 8)
                  .boolean("gemma3.attention.causal", false)
                  .u32("gemma3.attention.sliding_window_pattern", 6)
                  .tensor("dense.0.weight", {8, 16})
                  .tensor("dense.1.weight", {16, 8})
                  .tensor("norm.weight", {8})
                  .tensor("token_embd.weight", {8, 4})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.handlers == strings({"handle_embeddinggemma"}));
    CHECK(t.arch_after == "gemma-embedding");
    CHECK(t.checks[1].detail == "architecture is \"gemma-embedding\", not gemma3");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"general.architecture", "gemma-embedding.embedding_length", "gemma-embedding.rope.freq_base_swa",
                              "gemma-embedding.dense_2_feat_in", "gemma-embedding.dense_2_feat_out", "gemma-embedding.dense_3_feat_in",
                              "gemma-embedding.dense_3_feat_out"})));
    CHECK(typed(result_value(m, t, "general.architecture")) == "STRING gemma-embedding");
    CHECK(typed(result_value(m, t, "gemma-embedding.embedding_length")) == "UINT32 8");
    CHECK(typed(result_value(m, t, "gemma-embedding.rope.freq_base_swa")) == "FLOAT32 10000");
    CHECK(typed(result_value(m, t, "gemma-embedding.dense_2_feat_in")) == "UINT32 8");
    CHECK(typed(result_value(m, t, "gemma-embedding.dense_2_feat_out")) == "UINT32 16");
    CHECK(typed(result_value(m, t, "gemma-embedding.dense_3_feat_in")) == "UINT32 16");
    CHECK(typed(result_value(m, t, "gemma-embedding.dense_3_feat_out")) == "UINT32 8");
    // The copied causal / sliding_window_pattern keys were removed again.
    size_t removed = 0;
    for (const KvEdit& e : t.kv_edits) removed += e.op == KvOp::remove;
    CHECK(removed == 2);
    CHECK(result_tensors(m, t) ==
          strings({"dense_2.weight F32 [8,16]", "dense_3.weight F32 [16,8]", "output_norm.weight F32 [8]", "token_embd.weight F32 [8,4]"}));
}

TEST_CASE("gemma3n: vocab cut to per-layer rows, token types fixed, eos ids completed", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("gemma3n")
                  .str("tokenizer.ggml.model", "gemma")
                  .kv("tokenizer.ggml.tokens", array_strings({"<pad>", "<0x0A>", "<unused0>", "hello", "<0xZZ>", "extra"}))
                  .kv("tokenizer.ggml.scores", array_f32({0, 0, 0, -1, 0, -2}))
                  .kv("tokenizer.ggml.token_type", array_i32({3, 2, 2, 1, 2, 1}))
                  .tensor("token_embd.weight", {8, 6}, kF16)
                  .tensor("per_layer_token_embd.weight", {4, 5}, kF16)
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.handlers == strings({"handle_gemma3n"}));
    CHECK(t.checks[3].detail == "marker: token_embd rows 6 ≠ per_layer_token_embd rows 5");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
                              "tokenizer.ggml.eos_token_ids"})));
    CHECK(typed(result_value(m, t, "tokenizer.ggml.model")) == "STRING llama");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.tokens")) == "ARRAY[STRING] [STRING × 5] <pad>, <0x0A>, <unused0>, hello, <0xZZ>");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.scores")) == "ARRAY[FLOAT32] [FLOAT32 × 5] 0, 0, 0, -1, 0");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.token_type")) == "ARRAY[INT32] [INT32 × 5] 3, 6, 1, 1, 6");
    CHECK(typed(result_value(m, t, "tokenizer.ggml.eos_token_ids")) == "ARRAY[INT32] [INT32 × 2] 1, 106");
    CHECK(result_tensors(m, t) == strings({"token_embd.weight F16 [8,5]", "per_layer_token_embd.weight F16 [4,5]"}));
    CHECK(t.data_ops.empty());
    CHECK(t.skip_prefixes.empty());
    CHECK(t.kv_edits[0].note.starts_with("AMBIGUOUS:"));
}

TEST_CASE("gemma3n: a UINT32 eos list gets 106 appended in its own type", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("gemma3n")
                  .kv("tokenizer.ggml.eos_token_ids", array_u32({1}))
                  .tensor("token_embd.weight", {8, 6})
                  .tensor("per_layer_token_embd.weight", {4, 5})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(result_keys(m, t) == keys_after(m, strings({"tokenizer.ggml.model", "tokenizer.ggml.eos_token_ids"})));
    CHECK(typed(result_value(m, t, "tokenizer.ggml.eos_token_ids")) == "ARRAY[UINT32] [UINT32 × 2] 1, 106");
}

TEST_CASE("gemma4: tokenizer model, hidden encoders, per-expert gate/up fuse and scale rename", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("gemma4")
                  .u32("gemma4.block_count", 2)
                  .str("tokenizer.ggml.model", "llama")
                  .tensor("blk.0.ffn_gate_exps.weight", {8, 4, 2}, kF16)
                  .tensor("blk.0.ffn_gate_inp.per_expert_scale", {2})
                  .tensor("blk.0.ffn_up_exps.weight", {8, 4, 2}, kF16)
                  .tensor("blk.1.ffn_gate_exps.scale", {2})
                  .tensor("blk.1.ffn_gate_exps.weight", {8, 4, 2}, kF16)
                  .tensor("blk.1.ffn_up_exps.weight", {8, 4, 2}, kF16)
                  .tensor("a.blk.0.ln1.weight", {8})
                  .tensor("mm.input_projection.weight", {8, 8}, kF16)
                  .tensor("model.vision_tower.x.weight", {8})
                  .tensor("v.patch_embd.weight", {8, 8}, kF16)
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.handlers == strings({"handle_gemma4"}));
    CHECK(t.checks[4].detail == "marker: tensor prefix a.");
    CHECK(result_keys(m, t) == keys_after(m, strings({"tokenizer.ggml.model"})));
    CHECK(typed(result_value(m, t, "tokenizer.ggml.model")) == "STRING gemma4");
    CHECK(result_tensors(m, t) ==
          strings({"blk.0.ffn_gate_up_exps.weight F16 [8,8,2] op=interleave experts", "blk.0.ffn_down_exps.scale F32 [2]",
                   "blk.0.ffn_up_exps.weight F16 [8,4,2] hidden", "blk.1.ffn_gate_exps.scale F32 [2]",
                   "blk.1.ffn_gate_exps.weight F16 [8,4,2]", "blk.1.ffn_up_exps.weight F16 [8,4,2]", "a.blk.0.ln1.weight F32 [8] hidden",
                   "mm.input_projection.weight F16 [8,8] hidden", "model.vision_tower.x.weight F32 [8] hidden",
                   "v.patch_embd.weight F16 [8,8] hidden"}));
    REQUIRE(t.data_ops.size() == 1);
    CHECK(t.data_ops[0].sources == std::vector<size_t>{0, 2});
    CHECK(t.data_ops[0].params == std::vector<int64_t>{2});
    CHECK(t.no_mmap);
    CHECK(t.no_mmap_rule == "handle_gemma4");
    std::vector<std::string> prefixes;
    for (const SkipPrefix& p : t.skip_prefixes) prefixes.push_back(p.prefix);
    CHECK(prefixes == strings({"a.", "v.", "mm.", "model.vision_tower.", "blk.0.ffn_up_exps.weight"}));
}
