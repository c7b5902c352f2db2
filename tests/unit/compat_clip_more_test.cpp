// Clip-side rules of spec §1.5, continued: nemotron_h_omni, llama4, gemma4, glmocr, qwen25vl,
// qwen3vl, the LLaVA projector default and the early exit for files without v.* tensors.
#include <catch2/catch.hpp>

#include <algorithm>

#include "compat_clip_expect.h"

using namespace mlens;
using namespace mlens::test;

TEST_CASE("nemotron_h_omni clip: position resample, patch relabel, audio off, projector under clip.vision", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("nemotron_h_omni")
                  .u32("nemotron_h_omni.embedding_length", 32)
                  .u32("nemotron_h_omni.vision.embedding_length", 8)
                  .u32("nemotron_h_omni.vision.patch_size", 2)
                  .u32("nemotron_h_omni.vision.image_size", 8)
                  .u32("nemotron_h_omni.vision.num_channels", 3)
                  .kv("nemotron_h_omni.vision.image_mean", compat::array_f32({0.1f, 0.2f, 0.3f}))
                  .tensor("v.cls_embd", {8}, kF16)
                  .tensor("v.position_embd", {8, 9})
                  .tensor("v.patch_embd.weight", {12, 8}, kF16)
                  .tensor("mm.norm.weight", {32})
                  .tensor("mm.1.weight", {32, 32}, kF16)
                  .tensor("mm.2.weight", {32, 32}, kF16)
                  .tensor("a.blk.0.norm.weight", {4})
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_nemotron_h_omni_clip"});
    CHECK(fired_check(c, "handle_nemotron_h_omni_clip") == "marker: tensor prefix v.");
    CHECK(edited_kvs(m, c) ==
          std::vector<std::string>{
              "general.architecture = STRING clip",
              "clip.vision.embedding_length = UINT32 8",
              "clip.vision.patch_size = UINT32 2",
              "clip.vision.image_size = UINT32 8",
              "clip.vision.num_channels = UINT32 3",
              "clip.vision.projection_dim = UINT32 32",
              "clip.vision.image_mean = " + f32_array_text({0.1f, 0.2f, 0.3f}),
              "clip.vision.block_count = UINT32 32",
              "clip.vision.feed_forward_length = UINT32 32",
              "clip.vision.attention.head_count = UINT32 16",
              "clip.vision.attention.layer_norm_epsilon = FLOAT32 " + f32_text(1e-6f),
              "clip.vision.projector.scale_factor = UINT32 2",
              "clip.vision.image_std = " + f32_array_text({0.26862954f, 0.26130258f, 0.27577711f}),
              "clip.has_vision_encoder = BOOL true",
              "clip.vision.projector_type = STRING nemotron_v2_vl",
              "clip.use_gelu = BOOL true",
              "clip.has_audio_encoder = BOOL false",
          });
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "v.class_embd F32 [8] op=F16→F32",
              "v.position_embd.weight F32 [8,16] op=position resample",
              "v.patch_embd.weight F32 [2,2,3,8] op=dequantize to F32",
              "mm.model.mlp.0.weight F32 [32]",
              "mm.model.mlp.1.weight F16 [32,32]",
              "mm.model.mlp.3.weight F16 [32,32]",
              "a.blk.0.norm.weight F32 [4]",
          });
    // E = 8 from the KV, P = 9 (3×3 grid), T = 8/2 = 4, ne0 == E layout.
    CHECK(op_text(c, 1) == "position resample sources [1] params [8,9,4,0]");
    CHECK(op_text(c, 2) == "dequantize to F32 sources [2]");
}

TEST_CASE("llama4 clip: both projector keys, pixel-shuffle scale, renames without promotion", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("llama4")
                  .u32("llama4.embedding_length", 16)
                  .u32("llama4.vision.block_count", 1)
                  .f32("llama4.vision.pixel_shuffle_ratio", 0.25f)
                  .tensor("blk.0.attn_norm.weight", {16})
                  .tensor("blk.0.ffn_norm.weight", {16})
                  .tensor("v.positional_embedding_vlm", {8, 5})
                  .tensor("v.vision_adapter.mlp.fc1.weight", {8, 8}, kF16)
                  .tensor("mm.linear_1.weight", {8, 16}, kF16)
                  .tensor("v.class_embedding", {8})
                  .tensor("v.layernorm_pre.weight", {8})
                  .tensor("v.layernorm_post.weight", {8})
                  .tensor("v.patch_embedding.weight", {2, 2, 3, 8}, kF16)
                  .tensor("v.blk.0.attn_output.weight", {8, 8}, kF16)
                  .tensor("v.blk.0.mlp.fc1.weight", {8, 16}, kF16)
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_llama4_clip"});
    CHECK(edited_kvs(m, c) ==
          std::vector<std::string>{
              "clip.vision.block_count = UINT32 1",
              "clip.vision.projection_dim = UINT32 16",
              "clip.vision.projector.scale_factor = UINT32 4",
              "clip.vision.image_mean = " + f32_array_text({0.5f, 0.5f, 0.5f}),
              "clip.vision.image_std = " + f32_array_text({0.5f, 0.5f, 0.5f}),
              "clip.has_vision_encoder = BOOL true",
              "clip.use_gelu = BOOL true",
              "clip.projector_type = STRING llama4",
              "clip.vision.projector_type = STRING llama4",
              "general.architecture = STRING clip",
          });
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "blk.0.ln1.weight F32 [16]",
              "blk.0.ln2.weight F32 [16]",
              "v.position_embd.weight F32 [8,5]",
              "mm.model.mlp.1.weight F16 [8,8]",
              "mm.model.fc.weight F16 [8,16]",
              "v.class_embd F32 [8]",
              "v.pre_ln.weight F32 [8]",
              "v.post_ln.weight F32 [8]",
              "v.patch_embd.weight F16 [2,2,3,8]",
              "v.blk.0.attn_out.weight F16 [8,8]",
              "v.blk.0.ffn_up.weight F16 [8,16]",
          });
    CHECK(c.data_ops.empty());
}

TEST_CASE("clip KVs of an unexpected type: read or copied, one issue wording, nothing taken from them", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("llama4")
                  .f32("llama4.vision.block_count", 1.0f)
                  .u32("llama4.vision.pixel_shuffle_ratio", 4)
                  .tensor("blk.0.attn_norm.weight", {16})
                  .tensor("v.class_embedding", {8})
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_llama4_clip"});
    std::vector<std::string> issues;
    for (const compat::PlanIssue& i : c.issues) issues.push_back(i.rule + ": " + i.message);
    CHECK(issues ==
          std::vector<std::string>{
              "handle_llama4_clip: llama4.vision.block_count is FLOAT32, not UINT32: upstream asserts in gguf_get_val_u32",
              "handle_llama4_clip: llama4.vision.pixel_shuffle_ratio is UINT32, not FLOAT32: upstream asserts in gguf_get_val_f32",
          });
    const std::vector<std::string> edits = edited_kvs(m, c);
    CHECK(std::find(edits.begin(), edits.end(), "clip.vision.projector.scale_factor = UINT32 2") != edits.end());
    CHECK(std::none_of(edits.begin(), edits.end(), [](const std::string& e) { return e.starts_with("clip.vision.block_count"); }));
}

TEST_CASE("gemma4 clip: gemma4v and gemma4a KVs, audio block renames in order, audio-only files untouched", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("gemma4")
                  .u32("gemma4.embedding_length", 16)
                  .u32("gemma4.vision.block_count", 1)
                  .u32("gemma4.audio.block_count", 1)
                  .tensor("v.patch_embd.weight", {2, 2, 3, 8}, kF16)
                  .tensor("v.blk.0.ln1.weight", {8})
                  .tensor("a.pre_encode.out.weight", {8, 8}, kF16)
                  .tensor("mm.a.fc.weight", {8, 16}, kF16)
                  .tensor("mm.a.fc.bias", {16})
                  .tensor("a.blk.0.ln1.weight", {8})
                  .tensor("a.blk.0.ln2.weight", {8})
                  .tensor("a.blk.0.layer_pre_norm.weight", {8})
                  .tensor("a.blk.0.linear_pos.weight", {8, 8}, kF16)
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_gemma4_clip"});
    CHECK(fired_check(c, "handle_gemma4_clip") == "marker: tensor prefix a.");
    CHECK(edited_kvs(m, c) ==
          std::vector<std::string>{
              "general.architecture = STRING clip",
              "clip.vision.block_count = UINT32 1",
              "clip.vision.image_size = UINT32 224",
              "clip.vision.projection_dim = UINT32 16",
              "clip.vision.image_mean = " + f32_array_text({0.0f, 0.0f, 0.0f}),
              "clip.vision.image_std = " + f32_array_text({1.0f, 1.0f, 1.0f}),
              "clip.has_vision_encoder = BOOL true",
              "clip.vision.projector_type = STRING gemma4v",
              "clip.audio.block_count = UINT32 1",
              "clip.audio.num_mel_bins = UINT32 128",
              "clip.audio.projection_dim = UINT32 16",
              "clip.has_audio_encoder = BOOL true",
              "clip.audio.projector_type = STRING gemma4a",
          });
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "v.patch_embd.weight F32 [2,2,3,8] op=F16→F32",
              "v.blk.0.ln1.weight F32 [8]",
              "a.input_projection.weight F16 [8,8]",
              "a.pre_encode.out.weight F16 [8,16]",
              "a.pre_encode.out.bias F32 [16]",
              "a.blk.0.attn_pre_norm.weight F32 [8]",
              "a.blk.0.attn_post_norm.weight F32 [8]",
              "a.blk.0.ln2.weight F32 [8]",
              "a.blk.0.attn_k_rel.weight F16 [8,8]",
          });

    Model audio_only = OllamaGguf("gemma4").tensor("a.blk.0.ln1.weight", {8}).write(dir, "audio.gguf");
    const compat::SidePlan a = compat::plan_compat(audio_only).clip;
    CHECK(a.empty());
    CHECK(a.handlers.empty());
    REQUIRE(a.checks.size() == 2);
    CHECK(a.checks[1].rule == "translate_clip_metadata");
    CHECK(a.checks[1].detail == "no tensor starts with v.: nothing to translate");
}

TEST_CASE("glmocr clip: temporal patch pair, FLOAT32 mean copy, use_silu", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("glmocr")
                  .u32("glmocr.vision.block_count", 1)
                  .u32("glmocr.vision.intermediate_size", 32)
                  .f32("glmocr.vision.attention.layer_norm_rms_epsilon", 1e-5f)
                  .u32("glmocr.vision.out_hidden_size", 16)
                  .kv("glmocr.vision.image_mean", compat::array_f32({0.4f, 0.5f, 0.6f}))
                  .tensor("blk.0.attn_out.weight", {16, 16}, kF16)
                  .tensor("v.patch_embd_0.weight", {2, 2, 3, 8}, kF16)
                  .tensor("v.patch_embd_1.weight", {2, 2, 3, 8}, kF16)
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_glmocr_clip"});
    CHECK(fired_check(c, "handle_glmocr_clip") == detect_name_detail("glmocr"));
    CHECK(edited_kvs(m, c) ==
          with_clip_ending("use_silu", "glm4v", {
              "clip.vision.block_count = UINT32 1",
              "clip.vision.feed_forward_length = UINT32 32",
              "clip.vision.attention.layer_norm_epsilon = FLOAT32 " + f32_text(1e-5f),
              "clip.vision.projection_dim = UINT32 16",
              "clip.vision.image_mean = " + f32_array_text({0.4f, 0.5f, 0.6f}),
          }));
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "blk.0.attn_out.weight F16 [16,16]",
              "v.patch_embd.weight F32 [2,2,3,8] op=F16→F32",
              "v.patch_embd.weight.1 F32 [2,2,3,8] op=F16→F32",
          });
}

TEST_CASE("qwen25vl clip: n_wa_pattern from fullatt_block_indexes, else 8 - merger renames", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("qwen25vl")
                  .u32("qwen25vl.embedding_length", 16)
                  .u32("qwen25vl.vision.block_count", 1)
                  .kv("qwen25vl.vision.fullatt_block_indexes", compat::array_i32({3, 7}))
                  .tensor("v.blk.0.ffn_up.weight", {8, 24}, kF16)
                  .tensor("v.merger.ln_q.weight", {8})
                  .tensor("v.merger.mlp.0.weight", {32, 32}, kF16)
                  .tensor("v.merger.mlp.0.bias", {32})
                  .tensor("v.merger.mlp.2.weight", {32, 16}, kF16)
                  .tensor("v.merger.mlp.2.bias", {16})
                  .tensor("v.patch_embd_0.weight", {2, 2, 3, 8}, kF16)
                  .tensor("v.patch_embd_1.weight", {2, 2, 3, 8}, kF16)
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_qwen25vl_clip"});
    CHECK(edited_kvs(m, c) ==
          with_clip_ending("use_silu", "qwen2.5vl_merger", {
              "clip.vision.block_count = UINT32 1",
              "clip.vision.projection_dim = UINT32 16",
              "clip.vision.feed_forward_length = UINT32 24",
              "clip.vision.n_wa_pattern = UINT32 4",
              "clip.vision.image_size = UINT32 560",
              "clip.vision.image_mean = " + f32_array_text({0.48145466f, 0.4578275f, 0.40821073f}),
              "clip.vision.image_std = " + f32_array_text({0.26862954f, 0.26130258f, 0.27577711f}),
          }));
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "v.blk.0.ffn_up.weight F16 [8,24]",
              "v.post_ln.weight F32 [8]",
              "mm.0.weight F16 [32,32]",
              "mm.0.bias F32 [32]",
              "mm.2.weight F16 [32,16]",
              "mm.2.bias F32 [16]",
              "v.patch_embd.weight F32 [2,2,3,8] op=F16→F32",
              "v.patch_embd.weight.1 F32 [2,2,3,8] op=F16→F32",
          });

    Model bare = OllamaGguf("qwen25vl").tensor("v.post.weight", {4}).write(dir, "bare.gguf");
    const compat::SidePlan b = compat::plan_compat(bare).clip;
    CHECK(result_value_text(bare, b, "clip.vision.n_wa_pattern") == "UINT32 8");
    CHECK(b.kv_edits.front().key == "clip.vision.n_wa_pattern");
    CHECK(b.kv_edits.front().op == compat::KvOp::inject);
}

TEST_CASE("qwen3vl clip: F32 Q/K/V concat over mixed types, deepstack mask and renames, derived sizes", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("qwen3vl")
                  .u32("qwen3vl.embedding_length", 16)
                  .u32("qwen3vl.vision.block_count", 2)
                  .u32("qwen3vl.vision.patch_size", 2)
                  .u32("qwen3vl.vision.num_channels", 3)
                  .kv("qwen3vl.vision.deepstack_visual_indexes", compat::array_i32({1}))
                  .tensor("v.blk.0.attn_q.weight", {32, 32}, kF16)
                  .tensor("v.blk.0.attn_k.weight", {32, 32}, kF16)
                  .tensor("v.blk.0.attn_v.weight", {32, 32}, kQ8_0)
                  .tensor("v.blk.0.attn_q.bias", {32})
                  .tensor("v.blk.0.attn_k.bias", {32})
                  .tensor("v.blk.0.attn_v.bias", {32})
                  .tensor("v.blk.0.norm1.weight", {32})
                  .tensor("v.blk.0.mlp.linear_fc1.weight", {32, 64}, kF16)
                  .tensor("v.blk.1.attn_q.weight", {32, 32}, kF16)
                  .tensor("v.blk.1.attn_k.weight", {32, 32}, kF16)
                  .tensor("v.blk.1.attn_v.weight", {32, 32}, kF16)
                  .tensor("v.patch_embed.weight", {2, 2, 2, 96}, kF16)
                  .tensor("v.patch_embed.bias", {32})
                  .tensor("v.pos_embed.weight", {32, 16}, kF16)
                  .tensor("v.merger.norm.weight", {32})
                  .tensor("v.merger.linear_fc1.weight", {32, 32}, kF16)
                  .tensor("v.deepstack_merger.0.norm.weight", {32})
                  .tensor("v.deepstack_merger.0.linear_fc1.weight", {32, 32}, kF16)
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_qwen3vl_clip"});
    CHECK(fired_check(c, "handle_qwen3vl_clip") == "marker: qwen3vl.rope.dimension_sections missing");
    CHECK(edited_kvs(m, c) ==
          with_clip_ending("use_gelu", "qwen3vl_merger", {
              "clip.vision.block_count = UINT32 2",
              "clip.vision.num_channels = UINT32 3",
              "clip.vision.patch_size = UINT32 2",
              "clip.vision.projection_dim = UINT32 16",
              "clip.vision.temporal_patch_size = UINT32 2",
              "clip.vision.rope.freq_base = FLOAT32 10000",
              "clip.vision.feed_forward_length = UINT32 64",
              "clip.vision.image_size = UINT32 8",
              "clip.vision.image_min_pixels = UINT32 65536",
              "clip.vision.image_max_pixels = UINT32 16777216",
              "clip.vision.image_mean = " + f32_array_text({0.5f, 0.5f, 0.5f}),
              "clip.vision.image_std = " + f32_array_text({0.5f, 0.5f, 0.5f}),
              "clip.vision.is_deepstack_layers = ARRAY[BOOL] [BOOL × 2] false, true",
          }));
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "v.blk.0.attn_qkv.weight F32 [32,96] op=concat to F32",
              "v.patch_embd.weight.1 F32 [2,2,3,32] op=patch split",
              "v.blk.0.attn_v.weight Q8_0 [32,32]",
              "v.blk.0.attn_qkv.bias F32 [96] op=concat to F32",
              "v.blk.0.attn_k.bias F32 [32]",
              "v.blk.0.attn_v.bias F32 [32]",
              "v.blk.0.ln1.weight F32 [32]",
              "v.blk.0.ffn_up.weight F16 [32,64]",
              "v.blk.1.attn_qkv.weight F32 [32,96] op=concat to F32",
              "v.blk.1.attn_k.weight F16 [32,32]",
              "v.blk.1.attn_v.weight F16 [32,32]",
              "v.patch_embd.weight F32 [2,2,3,32] op=patch split",
              "v.patch_embd.bias F32 [32]",
              "v.position_embd.weight F32 [32,16] op=F16→F32",
              "v.post_ln.weight F32 [32]",
              "mm.0.weight F16 [32,32]",
              "v.deepstack.1.norm.weight F32 [32]",
              "v.deepstack.1.fc1.weight F16 [32,32]",
          });
    CHECK(op_text(c, 0) == "concat to F32 sources [0,1,2]");
    CHECK(op_text(c, 11) == "patch split sources [11] params [0,2,3]");
}

TEST_CASE("clip dispatch: LLaVA projector default for clip files, first detector wins, upstream files untouched", "[compat-clip]") {
    TempDir dir;
    Model llava = OllamaGguf("clip").boolean("clip.has_vision_encoder", true).tensor("v.patch_embd.weight", {4}).write(dir, "llava.gguf");
    const compat::SidePlan c = compat::plan_compat(llava).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_missing_llava_projector_type"});
    CHECK(edited_kvs(llava, c) == std::vector<std::string>{"clip.projector_type = STRING mlp"});
    CHECK(fired_check(c, "handle_missing_llava_projector_type") == "marker: clip file with a vision encoder and no projector type");
    CHECK(c.checks.size() == 12);  // the default, then all eleven detectors (none fires for "clip")

    Model typed_clip = OllamaGguf("clip")
                           .boolean("clip.has_vision_encoder", true)
                           .str("clip.vision.projector_type", "x")
                           .tensor("v.patch_embd.weight", {4})
                           .write(dir, "typed.gguf");
    CHECK(compat::plan_compat(typed_clip).clip.empty());

    Model no_encoder = OllamaGguf("clip").boolean("clip.has_vision_encoder", false).tensor("v.a", {4}).write(dir, "off.gguf");
    CHECK(compat::plan_compat(no_encoder).clip.checks.front().detail == "clip.has_vision_encoder is false");

    Model upstream_gemma =
        OllamaGguf("gemma3").f32("gemma3.attention.layer_norm_rms_epsilon", 1e-6f).tensor("token_embd.weight", {4, 4}).write(dir, "g.gguf");
    const compat::SidePlan g = compat::plan_compat(upstream_gemma).clip;
    CHECK(g.empty());
    CHECK(g.checks.back().detail == "no tensor starts with v.: nothing to translate");
}

TEST_CASE("hostile block counts: per-block rules visit only the blocks that have tensors", "[compat-clip][malformed]") {
    TempDir dir;
    // 2^32 - 1 blocks declared, one present: the gemma4 loops and the qwen3vl clip rules finish at
    // once and behave as for the one real block; the deepstack mask is refused, not allocated.
    Model gemma4 = OllamaGguf("gemma4")
                       .u32("gemma4.block_count", 0xFFFFFFFFu)
                       .u32("gemma4.audio.block_count", 0xFFFFFFFFu)
                       .tensor("blk.0.ffn_gate_inp.per_expert_scale", {4})
                       .tensor("a.blk.0.ln1.weight", {8})
                       .write(dir, "gemma4.gguf");
    compat::RewritePlan g = compat::plan_compat(gemma4);
    CHECK(std::find(g.text.handlers.begin(), g.text.handlers.end(), "handle_gemma4") != g.text.handlers.end());
    CHECK(result_tensors(gemma4, g.text)[0] == "blk.0.ffn_down_exps.scale F32 [4]");

    Model qwen = OllamaGguf("qwen3vl")
                     .u32("qwen3vl.vision.block_count", 0xFFFFFFFFu)
                     .tensor("v.blk.0.attn_q.weight", {8, 8}, kF16)
                     .tensor("v.blk.0.attn_k.weight", {8, 8}, kF16)
                     .tensor("v.blk.0.attn_v.weight", {8, 8}, kF16)
                     .write(dir, "qwen3vl.gguf");
    compat::RewritePlan q = compat::plan_compat(qwen);
    CHECK(result_value(qwen, q.clip, "clip.vision.is_deepstack_layers").type == ValueType::array);
    CHECK_FALSE(result_value(qwen, q.clip, "clip.vision.is_deepstack_layers").array);
    bool reported = false;
    for (const compat::PlanIssue& i : q.clip.issues) reported |= i.message.find("is_deepstack_layers is not built") != std::string::npos;
    CHECK(reported);
    CHECK(result_tensors(qwen, q.clip)[0].starts_with("v.blk.0.attn_qkv.weight"));
}
