// Model diff and whole-model error: a model against itself, an F16 model against its Q4_K
// quantization, and a Hugging Face-named safetensors file against the GGUF llama.cpp's converter
// would make of it (names, stacked experts, Q/K row permutation).
#include <catch2/catch.hpp>

#include <algorithm>

#include <ggml.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "hf_conversion_fixture.h"
#include "mlens/analysis/model_diff.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/formats/safetensors_reader.h"
#include "model_fixture.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::vector<test::FixtureTensor> fixture(uint32_t matrix_type) {
    return {{"token_embd.weight", GGML_TYPE_F32, {256, 3}, test::test_signal(768, 1)},
            {"blk.0.attn_q.weight", matrix_type, {256, 4}, test::test_signal(1024, 2)},
            {"blk.1.attn_q.weight", matrix_type, {256, 4}, test::test_signal(1024, 3)},
            {"blk.0.attn_norm.weight", GGML_TYPE_F32, {256}, test::test_signal(256, 4)}};
}

Model open(const std::string& path) {
    auto m = open_gguf(path);
    REQUIRE(m.ok());
    return std::move(*m);
}

}  // namespace

TEST_CASE("diff changes read the same wherever they are shown", "[diff]") {
    TensorChange retyped;
    retyped.name_a = retyped.name_b = "blk.0.attn_q.weight";
    retyped.type_a = "F16";
    retyped.type_b = "Q4_K";
    retyped.shape_a = retyped.shape_b = {256, 4};
    retyped.retyped = retyped.values_differ = true;
    CHECK(tensor_change_names(retyped) == std::vector<std::string>{"retyped", "values"});
    CHECK(tensor_type_text(retyped) == "F16\xE2\x86\x92Q4_K");
    CHECK(tensor_shape_text(retyped) == "[256, 4]");
    TensorChange added;
    added.name_b = "output.weight";
    added.type_b = "Q6_K";
    added.shape_b = {256, 8};
    added.added = true;
    CHECK(tensor_change_names(added) == std::vector<std::string>{"added"});
    CHECK(tensor_type_text(added) == "Q6_K");
    CHECK(tensor_shape_text(added) == "[256, 8]");
    TensorChange reshaped = retyped;
    reshaped.type_b = "F16";
    reshaped.shape_b = {256, 8};
    CHECK(tensor_type_text(reshaped) == "F16");
    CHECK(tensor_shape_text(reshaped) == "[256, 4]\xE2\x86\x92[256, 8]");

    MetadataChange m;
    m.kind = MetadataChangeKind::changed;
    m.key = "general.file_type";
    m.type_a = m.type_b = "u32";
    m.value_a = "1";
    m.value_b = "7";
    m.name_a = "MOSTLY_F16";
    m.name_b = "MOSTLY_Q8_0";
    CHECK(metadata_change_mark(m.kind) == std::string("~"));
    CHECK(metadata_change_name(m.kind) == std::string("changed"));
    CHECK(metadata_side_text(m, DiffSide::a) == "u32 1 (MOSTLY_F16)");
    CHECK(metadata_side_text(m, DiffSide::b) == "u32 7 (MOSTLY_Q8_0)");
    m.kind = MetadataChangeKind::added;
    m.type_a.clear();
    CHECK(metadata_side_text(m, DiffSide::a).empty());
    CHECK(metadata_change_mark(m.kind) == std::string("+"));
}

TEST_CASE("diff of a model with itself is empty", "[diff]") {
    test::TempDir dir;
    test::write_fixture_model(dir.file("a.gguf"), fixture(GGML_TYPE_F16));
    Model a = open(dir.file("a.gguf")), b = open(dir.file("a.gguf"));
    auto d = diff_models(a, b);
    REQUIRE(d.ok());
    CHECK(d->empty());
    DiffOptions numeric;
    numeric.numeric = true;
    auto dn = diff_models(a, b, numeric);
    REQUIRE(dn.ok());
    CHECK(dn->empty());
    REQUIRE(dn->layers.size() == 3);  // no layer, blk.0, blk.1
    for (const LayerError& l : dn->layers) CHECK(l.rmse == 0.0);
    auto cli = test::run_mlens({"diff", dir.file("a.gguf"), dir.file("a.gguf"), "--numeric"});
    CHECK(cli.exit_status == 0);
    CHECK(cli.out == "no differences\n");
}

TEST_CASE("diff --numeric of a file cut after it was opened names each unreadable tensor's read error", "[diff]") {
    test::TempDir dir;
    test::write_fixture_model(dir.file("a.gguf"), fixture(GGML_TYPE_F16));
    test::write_fixture_model(dir.file("b.gguf"), fixture(GGML_TYPE_Q4_K));
    Model a = open(dir.file("a.gguf")), b = open(dir.file("b.gguf"));
    // Opened whole; then the tensor data is cut from under the open model.
    std::filesystem::resize_file(dir.file("a.gguf"), a.tensors.front().data_offset + 16);
    DiffOptions numeric;
    numeric.numeric = true;
    auto d = diff_models(a, b, numeric);
    REQUIRE(d.ok());
    size_t unreadable = 0;
    for (const TensorChange& c : d->tensors) {
        INFO(c.name_a);
        if (!c.read_error) continue;
        ++unreadable;
        CHECK(c.values_differ);
        CHECK_FALSE(c.error);
        CHECK(c.failed == c.read_error->to_string());
        CHECK(c.read_error_path == a.files.front().path);  // the file cut, not its counterpart
    }
    CHECK(unreadable == a.tensors.size());  // every tensor lies past the cut
    // Cut on the other side, the other file is named.
    test::write_fixture_model(dir.file("a.gguf"), fixture(GGML_TYPE_F16));
    Model whole = open(dir.file("a.gguf"));
    std::filesystem::resize_file(dir.file("b.gguf"), b.tensors.front().data_offset + 16);
    auto cut_b = diff_models(whole, b, numeric);
    REQUIRE(cut_b.ok());
    for (const TensorChange& c : cut_b->tensors)
        if (c.read_error) CHECK(c.read_error_path == b.files.front().path);
    CHECK(std::count_if(cut_b->tensors.begin(), cut_b->tensors.end(), [](const TensorChange& c) { return c.read_error.has_value(); }) ==
          static_cast<long>(b.tensors.size()));
}

TEST_CASE("F16 model against its Q4_K quantization lists retyped tensors with their error", "[diff]") {
    test::TempDir dir;
    test::write_fixture_model(dir.file("f16.gguf"), fixture(GGML_TYPE_F16));
    auto q_bytes = test::write_fixture_model(dir.file("q4k.gguf"), fixture(GGML_TYPE_Q4_K));
    Model a = open(dir.file("f16.gguf")), b = open(dir.file("q4k.gguf"));

    auto plain = diff_models(a, b);
    REQUIRE(plain.ok());
    CHECK(plain->metadata.empty());
    REQUIRE(plain->tensors.size() == 2);
    CHECK(plain->tensors[0].name_a == "blk.0.attn_q.weight");
    CHECK(plain->tensors[0].retyped);
    CHECK_FALSE(plain->tensors[0].renamed);
    CHECK_FALSE(plain->tensors[0].reshaped);
    CHECK(plain->tensors[0].type_a == "F16");
    CHECK(plain->tensors[0].type_b == "Q4_K");
    CHECK_FALSE(plain->tensors[0].error);

    DiffOptions options;
    options.numeric = true;
    JobContext job;
    auto d = diff_models(a, b, options, &job);
    REQUIRE(d.ok());
    CHECK(job.progress() == 1.0);
    REQUIRE(d->tensors.size() == 2);
    for (const TensorChange& c : d->tensors) {
        INFO(c.name_a);
        CHECK(c.retyped);
        CHECK(c.values_differ);
        REQUIRE(c.error);
        CHECK(c.error->count == 1024);
        CHECK(c.error->rmse > 0.001);
        CHECK(c.error->rmse < 0.05);
        CHECK(c.error->cosine > 0.99);
    }
    // Layer 0 holds attn_q (error) and attn_norm (exact); layer 1 only attn_q.
    REQUIRE(d->layers.size() == 3);
    CHECK(d->layers[0].layer == -1);
    CHECK(d->layers[0].rmse == 0.0);
    CHECK(d->layers[1].layer == 0);
    CHECK(d->layers[1].tensors == 2);
    CHECK(d->layers[1].worst_tensor == "blk.0.attn_q.weight");
    const double e0 = d->tensors[0].error->rmse;
    CHECK(d->layers[1].rmse == Approx(std::sqrt(e0 * e0 * 1024 / (1024 + 256))).epsilon(1e-12));
    CHECK(d->layers[2].layer == 1);

    JobContext cancelled;
    cancelled.cancel();
    CHECK(diff_models(a, b, options, &cancelled).error().code == ErrorCode::E_CANCELLED);

    auto cli = test::run_mlens({"diff", dir.file("f16.gguf"), dir.file("q4k.gguf"), "--numeric", "--json"});
    REQUIRE(cli.exit_status == 0);
    auto j = nlohmann::json::parse(cli.out);
    REQUIRE(j["tensors"].size() == 2);
    CHECK(j["tensors"][0]["changes"] == nlohmann::json::array({"retyped", "values"}));
    CHECK(j["tensors"][0]["error"]["rmse"].get<double>() == Approx(e0));
}

TEST_CASE("compare_models pools every compared tensor into the overall figures", "[diff]") {
    test::TempDir dir;
    test::write_fixture_model(dir.file("f16.gguf"), fixture(GGML_TYPE_F16));
    test::write_fixture_model(dir.file("q4k.gguf"), fixture(GGML_TYPE_Q4_K));
    Model a = open(dir.file("f16.gguf")), b = open(dir.file("q4k.gguf"));
    auto r = compare_models(a, b, pair_tensors(a, b));
    REQUIRE(r.ok());
    REQUIRE(r->tensors.size() == 4);
    ErrorSums sums;
    for (const TensorError& t : r->tensors) {
        REQUIRE(t.error);
        CHECK(t.error->sums.count == t.error->count);
        CHECK(t.error->sums.err2 == Approx(t.error->rmse * t.error->rmse * t.error->count).epsilon(1e-12));
        sums.add(t.error->sums);
    }
    const OverallError& o = r->overall;
    CHECK(o.tensors == 4);
    CHECK(o.sums.count == 768 + 1024 + 1024 + 256);
    CHECK(o.sums.err2 == sums.err2);
    CHECK(o.sums.a2 == sums.a2);
    // The pooled RMSE weighs each tensor by its values: only the two Q4_K tensors carry error.
    const double e0 = r->tensors[1].error->rmse, e1 = r->tensors[2].error->rmse;
    CHECK(o.figures.rmse == Approx(std::sqrt((e0 * e0 + e1 * e1) * 1024 / 3072)).epsilon(1e-12));
    CHECK(o.figures.nmse == Approx(sums.err2 / sums.a2).epsilon(1e-12));
    CHECK(o.figures.cosine == Approx(sums.ab / std::sqrt(sums.a2 * sums.b2)).epsilon(1e-12));
    CHECK(o.figures.snr_db == Approx(10 * std::log10(sums.a2 / sums.err2)).epsilon(1e-12));
    CHECK(o.figures.cosine > 0.99);
    CHECK(o.figures.cosine < 1.0);
}

TEST_CASE("HF-named safetensors pairs with its GGUF conversion, Q/K permutation included", "[diff]") {
    test::TempDir dir;
    const test::HfConversionFiles files = test::write_hf_conversion(dir.path());
    Model gguf = open(files.gguf);
    auto opened_hf = open_safetensors(files.safetensors);
    REQUIRE(opened_hf.ok());
    const Model& hf = *opened_hf;
    REQUIRE(hf.error_count() == 0);
    auto aligned = automatic_name_alignment(hf, gguf);
    REQUIRE(aligned);
    CHECK(aligned->side == MapSide::a);
    CHECK_FALSE(automatic_name_alignment(gguf, gguf));

    DiffOptions options;
    options.numeric = true;
    auto d = diff_models(hf, gguf, options);
    REQUIRE(d.ok());
    CHECK(d->name_map == "hf→gguf llama");
    std::string listed;
    for (const TensorChange& c : d->tensors) listed += c.name_a + " -> " + c.name_b + "\n";
    INFO(listed);
    REQUIRE(d->tensors.size() == 6);  // 5 renamed, 1 removed
    std::map<std::string, const TensorChange*> by_a;
    for (const TensorChange& c : d->tensors) by_a[c.name_a] = &c;
    const std::pair<const char*, const char*> expected[] = {
        {"model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"},
        {"model.layers.0.self_attn.k_proj.weight", "blk.0.attn_k.weight"},
        {"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
        {"model.layers.0.block_sparse_moe.experts.1.w1.weight", "blk.0.ffn_gate_exps.weight[1]"},
        {"model.layers.0.block_sparse_moe.experts.0.w1.weight", "blk.0.ffn_gate_exps.weight[0]"}};
    for (const auto& [a_name, b_name] : expected) {
        INFO(a_name);
        REQUIRE(by_a.count(a_name));
        const TensorChange& c = *by_a[a_name];
        CHECK(c.name_b == b_name);
        CHECK(c.renamed);
        CHECK_FALSE(c.retyped);
        CHECK_FALSE(c.reshaped);
        CHECK_FALSE(c.values_differ);
        REQUIRE(c.error);
        CHECK(c.error->max_abs == 0.0);
    }
    CHECK(by_a.at("model.layers.0.mlp.extra.weight")->removed);
    // The safetensors file has no metadata: every GGUF key is added.
    REQUIRE(d->metadata.size() >= 3);
    for (const MetadataChange& m : d->metadata) CHECK(m.kind == MetadataChangeKind::added);
    CHECK(d->metadata[0].key == "general.architecture");
    CHECK(d->metadata[0].value_b == "llama");

    // Without the permutation (no head counts known) Q and K no longer agree.
    DiffOptions unpermuted = options;
    unpermuted.name_map = hf_to_gguf_name_map({"llama", 0, 0});
    auto u = diff_models(hf, gguf, unpermuted);
    REQUIRE(u.ok());
    size_t differing = 0;
    for (const TensorChange& c : u->tensors) differing += c.values_differ;
    CHECK(differing == 2);
}

TEST_CASE("mlens compare aligns a Hugging Face checkpoint with its GGUF conversion", "[diff][cli]") {
    test::TempDir dir;
    const test::HfConversionFiles files = test::write_hf_conversion(dir.path());
    test::CliRun json = test::run_mlens({"compare", files.safetensors, files.gguf, "--json"});
    INFO(json.out << json.err);
    REQUIRE(json.exit_status == 0);
    const auto rows = nlohmann::json::parse(json.out)["tensors"];
    REQUIRE(rows.size() == 5);  // the unconverted extra tensor has no counterpart
    std::map<std::string, std::string> paired;
    for (const auto& r : rows) {
        paired[r["tensor"]] = r["tensor_b"];
        CHECK(r["rmse"] == 0.0);
        CHECK(r["max_abs"] == 0.0);
        CHECK(r["block_length"] == 0);  // F32 on both sides: no quantization blocks
        CHECK(r["worst_blocks"].empty());
    }
    CHECK(paired["model.layers.0.self_attn.q_proj.weight"] == "blk.0.attn_q.weight");
    CHECK(paired["model.layers.0.block_sparse_moe.experts.1.w1.weight"] == "blk.0.ffn_gate_exps.weight[1]");
    test::CliRun text = test::run_mlens({"compare", files.safetensors, files.gguf, "--tensor", "blk.0.attn_k.weight"});
    CHECK(text.exit_status == 0);
    CHECK(text.out.find("tensor names aligned by hf\xE2\x86\x92gguf llama") != std::string::npos);
    CHECK(text.out.find("model.layers.0.self_attn.k_proj.weight \xE2\x86\x92 blk.0.attn_k.weight") != std::string::npos);
    CHECK(text.out.find("attn_q") == std::string::npos);
}

TEST_CASE("HF name map covers the common architectures", "[diff]") {
    auto qwen = hf_to_gguf_name_map({"qwen3moe", 4, 2});
    auto m = qwen("model.layers.3.mlp.experts.7.down_proj.weight");
    REQUIRE(m);
    CHECK(m->name == "blk.3.ffn_down_exps.weight");
    CHECK(m->slice == 7u);
    CHECK(m->rope_heads == 0);
    CHECK(qwen("model.layers.3.self_attn.q_norm.weight")->name == "blk.3.attn_q_norm.weight");
    CHECK(qwen("model.layers.3.mlp.gate.weight")->name == "blk.3.ffn_gate_inp.weight");
    CHECK(qwen("model.layers.3.post_attention_layernorm.weight")->name == "blk.3.ffn_norm.weight");
    CHECK(hf_to_gguf_name_map({"qwen2moe", 4, 2})("model.layers.0.mlp.shared_expert_gate.weight")->name ==
          "blk.0.ffn_gate_inp_shexp.weight");
    CHECK(hf_to_gguf_name_map({"qwen2", 4, 2})("model.layers.0.self_attn.q_proj.bias")->name == "blk.0.attn_q.bias");

    auto gemma = hf_to_gguf_name_map({"gemma3", 4, 1});
    auto post = gemma("language_model.model.layers.2.post_attention_layernorm.weight");
    REQUIRE(post);
    CHECK(post->name == "blk.2.post_attention_norm.weight");
    CHECK(post->add == 1.0f);
    CHECK(gemma("model.layers.2.pre_feedforward_layernorm.weight")->name == "blk.2.ffn_norm.weight");
    CHECK(gemma("model.layers.2.post_feedforward_layernorm.weight")->name == "blk.2.post_ffw_norm.weight");
    CHECK(gemma("model.norm.weight")->name == "output_norm.weight");
    CHECK(gemma("model.embed_tokens.weight")->add == 0.0f);
    CHECK(gemma("model.layers.2.self_attn.q_proj.weight")->rope_heads == 0);

    auto llama = hf_to_gguf_name_map({"llama", 32, 8});
    CHECK(llama("model.layers.0.self_attn.q_proj.weight")->rope_heads == 32);
    CHECK(llama("model.layers.0.self_attn.k_proj.weight")->rope_heads == 8);
    CHECK(llama("model.layers.0.self_attn.v_proj.weight")->rope_heads == 0);
    CHECK(llama("lm_head.weight")->name == "output.weight");
    CHECK_FALSE(llama("model.layers.0.unknown.weight"));
    CHECK(layer_of("blk.12.attn_q.weight") == 12);
    CHECK(layer_of("model.layers.3.mlp.up_proj.weight") == 3);
    CHECK(layer_of("output_norm.weight") == -1);
}
