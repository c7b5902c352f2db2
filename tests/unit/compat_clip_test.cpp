// Clip-side (mmproj) rules of spec §1.5: for each handler a small Ollama-format file built with
// our writer; the plan is checked key by key (resulting order, type, value) and tensor by tensor
// (resulting name, type, shape, data op), including the data-op sources and parameters.
#include <catch2/catch.hpp>

#include "compat_clip_expect.h"

using namespace mlens;
using namespace mlens::test;
using compat::DataOpKind;

TEST_CASE("gemma3 clip: KVs, swapped ffn names, text tensors renamed too, F16 promotions", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("gemma3")
                  .u32("gemma3.embedding_length", 64)
                  .u32("gemma3.mm.tokens_per_image", 4)
                  .u32("gemma3.vision.block_count", 1)
                  .u32("gemma3.vision.embedding_length", 32)
                  .u32("gemma3.vision.feed_forward_length", 48)
                  .u32("gemma3.vision.image_size", 28)
                  .u32("gemma3.vision.patch_size", 14)
                  .u32("gemma3.vision.attention.head_count", 2)
                  .f32("gemma3.vision.attention.layer_norm_epsilon", 1e-6f)
                  .tensor("token_embd.weight", {64, 10}, kF16)
                  .tensor("blk.0.attn_output.weight", {64, 64}, kF16)
                  .tensor("v.patch_embedding.weight", {14, 14, 3, 32}, kF16)
                  .tensor("v.position_embedding.weight", {32, 4}, kF16)
                  .tensor("v.blk.0.layer_norm1.weight", {32})
                  .tensor("v.blk.0.layer_norm2.weight", {32})
                  .tensor("v.blk.0.attn_output.weight", {32, 32}, kF16)
                  .tensor("v.blk.0.mlp.fc1.weight", {32, 48}, kF16)
                  .tensor("v.blk.0.mlp.fc2.weight", {48, 32}, kF16)
                  .tensor("v.post_layernorm.weight", {32})
                  .tensor("mm.mm_input_projection.weight", {32, 64}, kF16)
                  .tensor("mm.mm_soft_emb_norm.weight", {32})
                  .write(dir);
    compat::RewritePlan plan = compat::plan_compat(m);
    const compat::SidePlan& c = plan.clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_gemma3_clip"});
    CHECK(c.arch_after == "clip");
    CHECK(fired_check(c, "handle_gemma3_clip") == "marker: KV gemma3.mm.tokens_per_image");
    CHECK(untouched_keys(m, c) ==
          std::vector<std::string>{"gemma3.embedding_length", "gemma3.mm.tokens_per_image", "gemma3.vision.block_count",
                                   "gemma3.vision.embedding_length", "gemma3.vision.feed_forward_length", "gemma3.vision.image_size",
                                   "gemma3.vision.patch_size", "gemma3.vision.attention.head_count",
                                   "gemma3.vision.attention.layer_norm_epsilon"});
    CHECK(edited_kvs(m, c) ==
          with_clip_ending("use_gelu", "gemma3", {
              "clip.vision.block_count = UINT32 1",
              "clip.vision.embedding_length = UINT32 32",
              "clip.vision.feed_forward_length = UINT32 48",
              "clip.vision.image_size = UINT32 28",
              "clip.vision.patch_size = UINT32 14",
              "clip.vision.attention.head_count = UINT32 2",
              "clip.vision.attention.layer_norm_epsilon = FLOAT32 " + f32_text(1e-6f),
              "clip.vision.projection_dim = UINT32 64",
              "clip.vision.image_mean = " + f32_array_text({0.5f, 0.5f, 0.5f}),
              "clip.vision.image_std = " + f32_array_text({0.5f, 0.5f, 0.5f}),
          }));
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "token_embd.weight F16 [64,10]",
              "blk.0.attn_out.weight F16 [64,64]",
              "v.patch_embd.weight F32 [14,14,3,32] op=F16→F32",
              "v.position_embd.weight F32 [32,4] op=F16→F32",
              "v.blk.0.ln1.weight F32 [32]",
              "v.blk.0.ln2.weight F32 [32]",
              "v.blk.0.attn_out.weight F16 [32,32]",
              "v.blk.0.ffn_down.weight F16 [32,48]",
              "v.blk.0.ffn_up.weight F16 [48,32]",
              "v.post_ln.weight F32 [32]",
              "mm.input_projection.weight F16 [32,64]",
              "mm.soft_emb_norm.weight F32 [32]",
          });
    CHECK(op_text(c, 2) == "F16→F32 sources [2]");
    CHECK(c.skip_prefixes.empty());
    CHECK(c.issues.empty());
}

TEST_CASE("qwen35moe clip: Q/K/V byte concat, patch-embed split into a reclaimed slot, defaults", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("qwen35moe")
                  .u32("qwen35moe.embedding_length", 64)
                  .u32("qwen35moe.vision.block_count", 2)
                  .u32("qwen35moe.vision.embedding_length", 16)
                  .u32("qwen35moe.vision.attention.head_count", 2)
                  .u32("qwen35moe.vision.patch_size", 4)
                  .u32("qwen35moe.vision.spatial_merge_size", 2)
                  .u32("qwen35moe.vision.num_channels", 3)
                  .tensor("blk.0.attn_norm.weight", {64})
                  .tensor("v.blk.0.attn_q.weight", {16, 16}, kF16)
                  .tensor("v.blk.0.attn_k.weight", {16, 16}, kF16)
                  .tensor("v.blk.0.attn_v.weight", {16, 16}, kF16)
                  .tensor("v.blk.0.attn_q.bias", {16})
                  .tensor("v.blk.0.attn_k.bias", {16})
                  .tensor("v.blk.0.attn_v.bias", {16})
                  .tensor("v.blk.0.norm1.weight", {16})
                  .tensor("v.blk.0.mlp.linear_fc1.weight", {16, 32}, kF16)
                  .tensor("v.blk.1.attn_q.weight", {16, 16}, kF16)
                  .tensor("v.blk.1.attn_k.weight", {16, 16}, kF16)
                  .tensor("v.blk.1.attn_v.weight", {16, 16}, kF16)
                  .tensor("v.patch_embed.weight", {4, 4, 2, 48}, kF16)
                  .tensor("v.patch_embed.bias", {16})
                  .tensor("v.pos_embed.weight", {16, 16}, kF16)
                  .tensor("v.merger.norm.weight", {16})
                  .tensor("v.merger.linear_fc1.weight", {64, 64}, kF16)
                  .tensor("v.merger.linear_fc2.weight", {64, 64}, kF16)
                  .write(dir);
    compat::RewritePlan plan = compat::plan_compat(m);
    const compat::SidePlan& c = plan.clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_qwen35moe_clip"});
    CHECK(fired_check(c, "handle_qwen35moe_clip") == "marker: KV qwen35moe.vision.block_count");
    CHECK(edited_kvs(m, c) ==
          with_clip_ending("use_gelu", "qwen3vl_merger", {
              "clip.vision.block_count = UINT32 2",
              "clip.vision.embedding_length = UINT32 16",
              "clip.vision.attention.head_count = UINT32 2",
              "clip.vision.patch_size = UINT32 4",
              "clip.vision.spatial_merge_size = UINT32 2",
              "clip.vision.num_channels = UINT32 3",
              "clip.vision.projection_dim = UINT32 64",
              "clip.vision.feed_forward_length = UINT32 4304",
              "clip.vision.image_size = UINT32 768",
              "clip.vision.attention.layer_norm_epsilon = FLOAT32 " + f32_text(1e-6f),
              "clip.vision.image_mean = " + f32_array_text({0.5f, 0.5f, 0.5f}),
              "clip.vision.image_std = " + f32_array_text({0.5f, 0.5f, 0.5f}),
              "clip.vision.is_deepstack_layers = ARRAY[BOOL] [BOOL × 2] false, false",
          }));
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "blk.0.attn_norm.weight F32 [64]",
              "v.blk.0.attn_qkv.weight F16 [16,48] op=byte concat",
              "v.patch_embd.weight.1 F32 [4,4,3,16] op=patch split",
              "v.blk.0.attn_v.weight F16 [16,16]",
              "v.blk.0.attn_qkv.bias F32 [48] op=byte concat",
              "v.blk.0.attn_k.bias F32 [16]",
              "v.blk.0.attn_v.bias F32 [16]",
              "v.blk.0.ln1.weight F32 [16]",
              "v.blk.0.ffn_up.weight F16 [16,32]",
              "v.blk.1.attn_qkv.weight F16 [16,48] op=byte concat",
              "v.blk.1.attn_k.weight F16 [16,16]",
              "v.blk.1.attn_v.weight F16 [16,16]",
              "v.patch_embd.weight F32 [4,4,3,16] op=patch split",
              "v.patch_embd.bias F32 [16]",
              "v.position_embd.weight F32 [16,16] op=F16→F32",
              "v.post_ln.weight F32 [16]",
              "mm.0.weight F16 [64,64]",
              "mm.2.weight F16 [64,64]",
          });
    CHECK(op_text(c, 1) == "byte concat sources [1,2,3]");
    CHECK(op_text(c, 4) == "byte concat sources [4,5,6]");
    CHECK(op_text(c, 12) == "patch split sources [12] params [0,2,3]");
    CHECK(op_text(c, 2) == "patch split sources [12] params [1,2,3]");

    SECTION("qwen35 runs the same handler under its own rule") {
        Model q = OllamaGguf("qwen35").u32("qwen35.vision.block_count", 0).tensor("v.pos_embed.weight", {4, 4}, kF16).write(dir, "q.gguf");
        compat::SidePlan qc = compat::plan_compat(q).clip;
        CHECK(qc.handlers == std::vector<std::string>{"handle_qwen35_clip"});
        CHECK(fired_check(qc, "handle_qwen35moe_clip").empty());
        CHECK(result_value_text(q, qc, "clip.vision.is_deepstack_layers") == "<absent>");
        CHECK(result_tensors(q, qc) == std::vector<std::string>{"v.position_embd.weight F32 [4,4] op=F16→F32"});
    }
}

TEST_CASE("mistral3 clip: img_break zero-fill, vision RoPE permute on F16 only, renames", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("mistral3")
                  .u32("mistral3.embedding_length", 8)
                  .u32("mistral3.spatial_merge_size", 2)
                  .u32("mistral3.vision.block_count", 1)
                  .u32("mistral3.vision.embedding_length", 8)
                  .u32("mistral3.vision.attention.head_count", 2)
                  .f32("mistral3.vision.rope.freq_base", 10000.0f)
                  .tensor("output_norm.weight", {8})
                  .tensor("blk.0.attn_norm.weight", {8})
                  .tensor("v.patch_conv.weight", {2, 2, 3, 8}, kF16)
                  .tensor("v.encoder_norm.weight", {8})
                  .tensor("v.blk.0.attn_q.weight", {8, 8}, kF16)
                  .tensor("v.blk.0.attn_k.weight", {8, 8}, kF32)
                  .tensor("v.blk.0.attn_output.weight", {8, 8}, kF16)
                  .tensor("v.blk.0.attn_norm.weight", {8})
                  .tensor("v.blk.0.ffn_norm.weight", {8})
                  .tensor("mm.linear_1.weight", {8, 8}, kF16)
                  .tensor("mm.linear_2.weight", {8, 8}, kF16)
                  .tensor("mm.norm.weight", {8})
                  .tensor("mm.patch_merger.merging_layer.weight", {32, 8}, kF16)
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_mistral3_clip"});
    CHECK(fired_check(c, "handle_mistral3_clip") == "marker: tensor prefix v.");
    CHECK(edited_kvs(m, c) ==
          with_clip_ending("use_silu", "pixtral", {
              "clip.vision.block_count = UINT32 1",
              "clip.vision.embedding_length = UINT32 8",
              "clip.vision.attention.head_count = UINT32 2",
              "clip.vision.spatial_merge_size = UINT32 2",
              "clip.rope.freq_base = FLOAT32 10000",
              "clip.vision.projection_dim = UINT32 8",
              "clip.vision.attention.layer_norm_epsilon = FLOAT32 " + f32_text(1e-5f),
              "clip.vision.image_mean = " + f32_array_text({0.48145467f, 0.45782750f, 0.40821072f}),
              "clip.vision.image_std = " + f32_array_text({0.26862955f, 0.26130259f, 0.27577710f}),
          }));
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "v.token_embd.img_break F32 [8] op=zero fill",
              "blk.0.ln1.weight F32 [8]",
              "v.patch_embd.weight F32 [2,2,3,8] op=F16→F32",
              "v.pre_ln.weight F32 [8]",
              "v.blk.0.attn_q.weight F16 [8,8] op=RoPE permute",
              "v.blk.0.attn_k.weight F32 [8,8]",
              "v.blk.0.attn_out.weight F16 [8,8]",
              "v.blk.0.ln1.weight F32 [8]",
              "v.blk.0.ln2.weight F32 [8]",
              "mm.1.weight F16 [8,8]",
              "mm.2.weight F16 [8,8]",
              "mm.input_norm.weight F32 [8]",
              "mm.patch_merger.weight F16 [32,8]",
          });
    CHECK(op_text(c, 0) == "zero fill sources []");
    CHECK(op_text(c, 4) == "RoPE permute sources [4] params [2]");
}

TEST_CASE("deepseekocr clip: s. prefix to v.sam., exact pos_embd rename, substring renames", "[compat-clip]") {
    TempDir dir;
    Model m = OllamaGguf("deepseekocr")
                  .u32("deepseekocr.vision.block_count", 1)
                  .u32("deepseekocr.vision.head_count", 2)
                  .u32("deepseekocr.sam.block_count", 1)
                  .tensor("s.patch_embd.weight", {4, 4, 3, 8}, kF16)
                  .tensor("s.position_embd", {8, 4, 4})
                  .tensor("s.blk.0.attn.proj.weight", {8, 8}, kF16)
                  .tensor("s.blk.0.attn.rel_pos_h", {4, 7})
                  .tensor("s.blk.0.norm1.weight", {8})
                  .tensor("v.patch_embd.weight", {4, 4, 3, 8}, kF16)
                  .tensor("v.position_embd.weight", {8, 5}, kF16)
                  .tensor("v.blk.0.self_attn.qkv_proj.weight", {8, 24}, kF16)
                  .tensor("v.blk.0.layer_norm1.weight", {8})
                  .tensor("v.pre_layrnorm.weight", {8})
                  .tensor("mm.layers.weight", {16, 8}, kF16)
                  .tensor("mm.image_newline", {8})
                  .tensor("mm.view_seperator", {8})
                  .write(dir);
    const compat::SidePlan c = compat::plan_compat(m).clip;
    CHECK(c.handlers == std::vector<std::string>{"handle_deepseekocr_clip"});
    CHECK(fired_check(c, "handle_deepseekocr_clip") == detect_name_detail("deepseekocr"));
    CHECK(edited_kvs(m, c) ==
          with_clip_ending("use_gelu", "deepseekocr", {
              "clip.vision.block_count = UINT32 1",
              "clip.vision.attention.head_count = UINT32 2",
              "clip.vision.sam.block_count = UINT32 1",
              "clip.vision.feed_forward_length = UINT32 64",
              "clip.vision.projection_dim = UINT32 1280",
              "clip.vision.projector.scale_factor = UINT32 1",
              "clip.vision.window_size = UINT32 14",
              "clip.vision.attention.layer_norm_epsilon = FLOAT32 " + f32_text(1e-6f),
              "clip.vision.image_mean = " + f32_array_text({0.5f, 0.5f, 0.5f}),
              "clip.vision.image_std = " + f32_array_text({0.5f, 0.5f, 0.5f}),
          }));
    CHECK(result_tensors(m, c) ==
          std::vector<std::string>{
              "v.sam.patch_embd.weight F32 [4,4,3,8] op=F16→F32",
              "v.sam.pos_embd.weight F32 [8,4,4]",
              "v.sam.blk.0.attn.out.weight F16 [8,8]",
              "v.sam.blk.0.attn.pos_h.weight F32 [4,7]",
              "v.sam.blk.0.pre_ln.weight F32 [8]",
              "v.patch_embd.weight F32 [4,4,3,8] op=F16→F32",
              "v.position_embd.weight F32 [8,5] op=F16→F32",
              "v.blk.0.attn_qkv.weight F16 [8,24]",
              "v.blk.0.ln1.weight F32 [8]",
              "v.pre_ln.weight F32 [8]",
              "mm.model.fc.weight F16 [16,8]",
              "v.image_newline F32 [8]",
              "v.view_seperator F32 [8]",
          });
}
