// Text-side compat rules for the qwen family (spec §1.4): qwen35moe with MTP translation, qwen35,
// qwen3next, qwen25vl and qwen3vl/qwen3vlmoe.
#include <catch2/catch.hpp>

#include "compat_fixture.h"

using namespace mlens;
using namespace mlens::compat;
using namespace mlens::test;

TEST_CASE("qwen35moe: head counts, sections, ssm_dt, MTP experts merged, norms shifted", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("qwen35moe")
                  .u32("qwen35moe.block_count", 2)
                  .kv("qwen35moe.attention.head_count_kv", array_u32({0, 4}))
                  .kv("qwen35moe.rope.dimension_sections", array_i32({11, 11, 10}))
                  .tensor("blk.0.ssm_dt", {4})
                  .tensor("blk.1.attn_q.weight", {8, 8}, kF16)
                  .tensor("mtp.layers.0.mlp.experts.1.gate_proj.weight", {8, 4}, kF16)
                  .tensor("mtp.layers.0.mlp.experts.0.gate_proj.weight", {8, 4}, kF16)
                  .tensor("mtp.layers.0.mlp.experts.0.up_proj.weight", {8, 4}, kF16)
                  .tensor("mtp.layers.0.mlp.experts.1.up_proj.weight", {8, 4}, kF16)
                  .tensor("mtp.layers.0.mlp.experts.0.down_proj.weight", {4, 8}, kF16)
                  .tensor("mtp.layers.0.mlp.experts.1.down_proj.weight", {4, 8}, kF16)
                  .tensor("mtp.layers.0.attn_norm.weight", {8})
                  .tensor("mtp.layers.0.ssm_norm.weight", {8})
                  .tensor("mtp.fc.weight", {16, 8}, kF16)
                  .tensor("mtp.pre_fc_norm_embedding.weight", {8}, kF16)
                  .tensor("mtp.norm.weight", {8})
                  .tensor("v.blk.0.attn_q.weight", {8, 8}, kF16)
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.handlers == strings({"handle_qwen35moe"}));
    CHECK(t.checks[5].detail == "marker: tensor prefix mtp.");
    CHECK(result_keys(m, t) ==
          keys_after(m,
                     strings({"qwen35moe.attention.head_count_kv", "qwen35moe.rope.dimension_sections", "qwen35moe.nextn_predict_layers",
                              "qwen35moe.block_count"})));
    CHECK(typed(result_value(m, t, "qwen35moe.attention.head_count_kv")) == "UINT32 4");
    CHECK(typed(result_value(m, t, "qwen35moe.rope.dimension_sections")) == "ARRAY[INT32] [INT32 × 4] 11, 11, 10, 0");
    CHECK(typed(result_value(m, t, "qwen35moe.nextn_predict_layers")) == "UINT32 1");
    CHECK(typed(result_value(m, t, "qwen35moe.block_count")) == "UINT32 3");
    CHECK(result_tensors(m, t) ==
          strings({"blk.0.ssm_dt.bias F32 [4]", "blk.1.attn_q.weight F16 [8,8]",
                   "mtp.layers.0.mlp.experts.1.gate_proj.weight F16 [8,4] hidden", "blk.2.ffn_gate_exps.weight F16 [8,4,2] op=byte concat",
                   "blk.2.ffn_up_exps.weight F16 [8,4,2] op=byte concat", "mtp.layers.0.mlp.experts.1.up_proj.weight F16 [8,4] hidden",
                   "blk.2.ffn_down_exps.weight F16 [4,8,2] op=byte concat", "mtp.layers.0.mlp.experts.1.down_proj.weight F16 [4,8] hidden",
                   "blk.2.attn_norm.weight F32 [8] op=norm +1", "blk.2.ssm_norm.weight F32 [8]", "blk.2.nextn.eh_proj.weight F16 [16,8]",
                   "blk.2.nextn.enorm.weight F32 [8] op=norm +1", "blk.2.nextn.shared_head_norm.weight F32 [8] op=norm +1",
                   "v.blk.0.attn_q.weight F16 [8,8] hidden"}));
    // Experts concatenated in expert order, not file order.
    REQUIRE(t.data_ops.size() == 6);
    CHECK(t.data_ops[0].dest == 3);
    CHECK(t.data_ops[0].sources == std::vector<size_t>{3, 2});
    CHECK(t.data_ops[3].note.starts_with("AMBIGUOUS:"));
    CHECK(t.no_mmap);
    std::vector<std::string> prefixes;
    for (const SkipPrefix& p : t.skip_prefixes) prefixes.push_back(p.prefix);
    CHECK(prefixes == strings({"v.", "mm.", "mtp."}));
}

TEST_CASE("qwen35: detected by a KV marker, no MTP, vision hidden", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("qwen35")
                  .boolean("qwen35.ssm.v_head_reordered", true)
                  .u32("qwen35.feed_forward_length", 64)
                  .kv("qwen35.attention.head_count_kv", array_i32({0, 0}))
                  .tensor("blk.0.ssm_dt", {4})
                  .tensor("mm.0.weight", {8, 8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.checks[6].detail == "marker: KV qwen35.ssm.v_head_reordered");
    CHECK(result_keys(m, t) == keys_after(m, strings({"qwen35.attention.head_count_kv"})));
    CHECK(typed(result_value(m, t, "qwen35.attention.head_count_kv")) == "UINT32 2");
    CHECK(result_tensors(m, t) == strings({"blk.0.ssm_dt.bias F32 [4]", "mm.0.weight F32 [8,8] hidden"}));
    CHECK_FALSE(t.no_mmap);
}

TEST_CASE("qwen35: feed_forward_length is a marker only for qwen35moe", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("qwen35").u32("qwen35.feed_forward_length", 64).tensor("blk.0.ssm_dt", {4}).write(dir);
    CHECK(plan_compat(m).text.empty());
}

TEST_CASE("qwen35: a native nextn layout stops the MTP translation", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("qwen35")
                  .tensor("blk.0.attn_q.weight", {8, 8})
                  .tensor("blk.1.nextn.eh_proj.weight", {16, 8})
                  .tensor("mtp.fc.weight", {16, 8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(result_keys(m, t) == stored_keys(m));
    CHECK(result_tensors(m, t) ==
          strings({"blk.0.attn_q.weight F32 [8,8]", "blk.1.nextn.eh_proj.weight F32 [16,8]", "mtp.fc.weight F32 [16,8] hidden"}));
    CHECK_FALSE(t.no_mmap);
}

TEST_CASE("qwen3next: all-zero head counts stay, ssm_dt gets .bias", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("qwen3next")
                  .kv("qwen3next.attention.head_count_kv", array_u32({0, 0}))
                  .tensor("blk.0.ssm_dt", {4})
                  .tensor("blk.0.ssm_dt.x", {4})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.kv_edits.empty());
    CHECK(result_tensors(m, t) == strings({"blk.0.ssm_dt.bias F32 [4]", "blk.0.ssm_dt.x F32 [4]"}));
}

TEST_CASE("qwen25vl: becomes qwen2vl with padded sections", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("qwen25vl")
                  .u32("qwen25vl.block_count", 2)
                  .kv("qwen25vl.rope.mrope_section", array_i32({16, 24, 24}))
                  .tensor("blk.0.attn_q.weight", {8, 8})
                  .tensor("v.merger.ln_q.weight", {8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.arch_after == "qwen2vl");
    CHECK(t.checks[13].detail == "marker: architecture name qwen25vl (Ollama-only)");
    CHECK(
        result_keys(m, t) ==
        keys_after(
            m, strings({"general.architecture", "qwen2vl.block_count", "qwen2vl.rope.mrope_section", "qwen2vl.rope.dimension_sections"})));
    CHECK(typed(result_value(m, t, "qwen2vl.rope.dimension_sections")) == "ARRAY[INT32] [INT32 × 4] 16, 24, 24, 0");
    CHECK(typed(result_value(m, t, "qwen25vl.block_count")) == "UINT32 2");
    CHECK(result_tensors(m, t) == strings({"blk.0.attn_q.weight F32 [8,8]", "v.merger.ln_q.weight F32 [8] hidden"}));
}

TEST_CASE("qwen3vlmoe: hard-coded sections and deepstack count - gated on missing sections", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("qwen3vlmoe")
                  .kv("qwen3vlmoe.vision.deepstack_visual_indexes", array_i32({8, 16, 24}))
                  .tensor("blk.0.attn_q.weight", {8, 8})
                  .tensor("v.blk.0.attn_q.weight", {8, 8})
                  .write(dir);
    const SidePlan t = plan_compat(m).text;
    CHECK(t.handlers == strings({"handle_qwen3vl"}));
    CHECK(result_keys(m, t) == keys_after(m, strings({"qwen3vlmoe.rope.dimension_sections", "qwen3vlmoe.n_deepstack_layers"})));
    CHECK(typed(result_value(m, t, "qwen3vlmoe.rope.dimension_sections")) == "ARRAY[INT32] [INT32 × 4] 24, 20, 20, 0");
    CHECK(typed(result_value(m, t, "qwen3vlmoe.n_deepstack_layers")) == "UINT32 3");
    CHECK(result_tensors(m, t) == strings({"blk.0.attn_q.weight F32 [8,8]", "v.blk.0.attn_q.weight F32 [8,8] hidden"}));

    TempDir dir2;
    Model up = OllamaGguf("qwen3vl")
                   .kv("qwen3vl.rope.dimension_sections", array_i32({24, 20, 20, 0}))
                   .tensor("blk.0.attn_q.weight", {8, 8})
                   .write(dir2);
    const SidePlan u = plan_compat(up).text;
    CHECK(u.empty());
    CHECK(u.checks[14].detail == "qwen3vl.rope.dimension_sections present");
}
