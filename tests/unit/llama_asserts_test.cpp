// The table of hyperparameter combinations the pinned llama.cpp asserts on: one fixture per row
// trips exactly that row (and `mlens check` names its assert), a sound header trips none.
#include <catch2/catch.hpp>

#include <map>
#include <variant>

#include "cli_runner.h"
#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/llama_asserts.h"
#include "mlens/formats/llama_requirements.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

using KvValue = std::variant<uint32_t, float, std::string>;
using Kvs = std::map<std::string, KvValue>;  // suffix after "qwen2."; "-" removes a key

const Kvs kSound = {{"block_count", 2u},
                    {"embedding_length", 64u},
                    {"attention.head_count", 4u},
                    {"attention.head_count_kv", 2u},
                    {"attention.layer_norm_rms_epsilon", 1e-6f}};

// One fixture per row of llama_asserts(), in table order.
const std::vector<Kvs> kTrips = {
    {{"block_count", 0u}},
    {{"nextn_predict_layers", 3u}},
    {{"expert_count", 2000u}, {"expert_used_count", 2u}},
    {{"expert_used_count", 2u}},  // no expert_count: llama.cpp reads 0 experts
    {{"expert_count", 8u}},  // no expert_used_count
    {{"expert_count", 8u}, {"expert_used_count", 2u}, {"expert_group_count", 8u}},
    {{"expert_count", 8u}, {"expert_used_count", 2u}, {"expert_group_count", 3u}},
    {{"expert_count", 8u}, {"expert_used_count", 2u}, {"expert_group_count", 4u}},
    {{"expert_count", 8u}, {"expert_used_count", 2u}, {"expert_group_count", 4u}, {"expert_group_used_count", 4u}},
    {{"expert_group_count", 2u}},
    {{"rope.scaling.type", std::string("bogus")}},
    {{"attention.layer_norm_rms_epsilon", -1.0f}},
    {{"attention.layer_norm_epsilon", -1.0f}},
    {{"attention.head_count_kv", 3u}},
    {{"attention.key_length", 16u}, {"attention.value_length", 8u}},
    {{"rope.dimension_count", 8u}},
};

std::string write_fixture(const TempDir& dir, const std::string& name, const Kvs& changes) {
    Kvs kvs = kSound;
    for (const auto& [k, v] : changes) kvs[k] = v;
    GgufBuilder b;
    b.header(0, kvs.size() + 1);
    b.kv_string("general.architecture", "qwen2");
    for (const auto& [k, v] : kvs) {
        const std::string key = "qwen2." + k;
        if (const auto* u = std::get_if<uint32_t>(&v))
            b.kv_u32(key, *u);
        else if (const auto* f = std::get_if<float>(&v))
            b.kv(key, ValueType::f32).f32(*f);
        else
            b.kv_string(key, std::get<std::string>(v));
    }
    b.pad_to(32);
    const std::string path = dir.file(name);
    write_whole_file(path, b.bytes);
    return path;
}

std::vector<Diagnostic> abort_warnings(const std::string& path) {
    auto model = open_gguf(path);
    REQUIRE(model);
    std::vector<Diagnostic> out;
    for (const Diagnostic& d : model->diagnostics)
        if (d.code == ErrorCode::W_LLAMA_ABORT) out.push_back(d);
    return out;
}

}  // namespace

TEST_CASE("llama asserts: each row's fixture trips exactly that row", "[llama_asserts][gguf]") {
    TempDir dir;
    const auto rows = llama_asserts();
    REQUIRE(rows.size() == kTrips.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        INFO("row " << i << ": " << rows[i].assert_text);
        std::vector<Diagnostic> w = abort_warnings(write_fixture(dir, "row" + std::to_string(i) + ".gguf", kTrips[i]));
        REQUIRE(w.size() == 1);
        // On the first of the row's keys the file has.
        const bool first_key = w[0].field == std::string("qwen2.") + rows[i].keys[0];
        CHECK((first_key || (rows[i].keys[1] && w[0].field == std::string("qwen2.") + rows[i].keys[1])));
        CHECK(w[0].message.find(rows[i].assert_text) != std::string::npos);
        CHECK(w[0].message.find(llama_assert_where(rows[i], "qwen2")) != std::string::npos);
    }
}

TEST_CASE("llama asserts: a sound header trips none", "[llama_asserts][gguf]") {
    TempDir dir;
    CHECK(abort_warnings(write_fixture(dir, "sound.gguf", {})).empty());
    // Experts, groups and rope settings llama.cpp accepts.
    CHECK(abort_warnings(write_fixture(dir, "moe.gguf",
                                       {{"expert_count", 8u},
                                        {"expert_used_count", 2u},
                                        {"expert_group_count", 4u},
                                        {"expert_group_used_count", 2u},
                                        {"rope.scaling.type", std::string("yarn")},
                                        {"rope.dimension_count", 16u}}))
              .empty());
}

TEST_CASE("mlens check warns about expert_used_count without expert_count and names the assert", "[llama_asserts][cli]") {
    TempDir dir;
    const std::string path = write_fixture(dir, "used.gguf", {{"expert_used_count", 2u}});
    CliRun run = run_mlens({"check", path});
    CHECK(run.exit_status == 0);
    CHECK_THAT(run.err, Catch::Contains("W_LLAMA_ABORT qwen2.expert_used_count") &&
                            Catch::Contains("qwen2.expert_count = absent") &&
                            Catch::Contains("GGML_ASSERT(n_expert_used_max <= hparams.n_expert)") &&
                            Catch::Contains("src/llama-model.cpp:1294"));
}

TEST_CASE("llama asserts: every row's assert is found where the generated sites say", "[llama_asserts][gguf]") {
    auto builder_file = [](const char* text, const char* arch) {
        const char* file = graph_assert_file(text, arch);
        return std::string(file ? file : "none");
    };
    for (const LlamaAssert& row : llama_asserts()) {
        INFO(row.assert_text);
        if (row.function)
            CHECK(find_llama_assert_site(row.assert_text, row.function));
        else
            CHECK(builder_file(row.assert_text, "qwen2") == "src/models/qwen2.cpp");
    }
    CHECK(llama_assert_where(llama_asserts()[0], "qwen2") == "src/llama-model.cpp:1260 (llama_model_base::load_hparams)");
    // llama's load_hparams refuses another rope dimension first: its graph assert is not a row's.
    CHECK(builder_file("GGML_ASSERT(n_embd_head == n_rot)", "llama") == "src/models/llama.cpp");
    // granite_swa's builder lives in granite-swa.cpp: the file comes from the source, not the name.
    CHECK(builder_file("GGML_ASSERT(n_embd_head == n_rot)", "granite_swa") == "src/models/granite-swa.cpp");
}
