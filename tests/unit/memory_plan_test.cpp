// mlens memory: the estimate from the file against what llama.cpp allocates, on the demo models.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <ggml.h>

#include <cmath>

#include "build_paths.h"
#include "cli_runner.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/open/target.h"
#include "safetensors_builder.h"
#include "split_shards.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;

namespace {

std::string demo(const std::string& name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

nlohmann::json memory_json(const std::string& path, uint32_t ctx, const std::string& kv_type = "f16") {
    return test::run_mlens_json({"memory", path, "--ctx", std::to_string(ctx), "--kv-type", kv_type, "--threads", "1", "--json"});
}

// The matmul weights of a tiny model retyped: `type` for the 2D ones, `experts` for the stacked
// experts (ggml repacks Q4_0 and MXFP4 rows in groups of 8 on this CPU).
test::TinyModel retyped(test::TinyModel m, uint32_t type, uint32_t experts) {
    for (test::TinyTensor& t : m.tensors) {
        if (t.name.find("_exps.weight") != std::string::npos)
            t.ggml_type = experts;
        else if (t.ne.size() == 2 && t.name != "token_embd.weight" && t.name.ends_with(".weight") && t.name.find("gate_inp") == std::string::npos)
            t.ggml_type = type;
    }
    return m;
}

// llama.cpp's plan (no weight loaded) and the allocation agree on the KV cache and the compute
// buffer (the plan's weights are the tensors' sizes, without the mappings' gaps), and the
// estimate's weights and KV cache are exact; its compute within `compute_tolerance`.
void check_terms(const nlohmann::json& j, double compute_tolerance) {
    INFO(j.dump());
    const nlohmann::json& t = j["terms"];
    for (const char* term : {"weights", "kv"}) CHECK(t[term]["estimate"].get<uint64_t>() == t[term]["llama_cpp"].get<uint64_t>());
    for (const char* term : {"kv", "compute"}) CHECK(t[term]["plan"].get<uint64_t>() == t[term]["llama_cpp"].get<uint64_t>());
    CHECK(std::fabs(t["compute"]["relative_error"].get<double>()) <= compute_tolerance);
}

// The demo llama: 2 layers, 2 KV heads of 16 values, so K and V are 32 values a cell and layer.
uint64_t demo_kv_bytes(uint32_t ctx, const std::string& kv_type) {
    const uint64_t row = kv_type == "f16" ? 32 * 2 : 32 * 4;
    return 2ull * ctx * 2 * row;
}

}  // namespace

TEST_CASE("mlens memory: weights and KV exact, compute within 1% of llama.cpp's buffers on the demo llama", "[memory][infer][cli]") {
    for (const char* model : {"tiny-llama-f32.gguf", "tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf"})
        for (uint32_t ctx : {256u, 2048u, 8192u}) {
            INFO(model << " ctx " << ctx);
            nlohmann::json j = memory_json(demo(model), ctx, "f16");
            check_terms(j, 0.01);
            CHECK(j["terms"]["kv"]["llama_cpp"].get<uint64_t>() == demo_kv_bytes(ctx, "f16"));
        }
    nlohmann::json j = memory_json(demo("tiny-llama-q4_0.gguf"), 2048, "f32");
    CHECK(j["terms"]["kv"]["estimate"].get<uint64_t>() == j["terms"]["kv"]["llama_cpp"].get<uint64_t>());
    CHECK(j["terms"]["kv"]["llama_cpp"].get<uint64_t>() == demo_kv_bytes(2048, "f32"));
}

// The Ollama-made demos reach llama.cpp through their upstream export: the estimate is of that
// export (the vision tensors of qwen25vl stay out), and their 324-token vocabularies put the
// compute peak inside a layer (the graph's inputs, the mask and the layer's working set), which
// the estimate models to the byte; qwen25vl adds its four positions per token.
TEST_CASE("mlens memory: every term exact on the Ollama-made demos, estimated on the export llama.cpp is given", "[memory][infer][cli]") {
    for (const char* model : {"ollama-gemma3.gguf", "ollama-qwen25vl.gguf"})
        for (uint32_t ctx : {256u, 2048u, 8192u}) {
            INFO(model << " ctx " << ctx);
            nlohmann::json j = memory_json(demo(model), ctx, "f16");
            check_terms(j, 0.0);
            CHECK(j["terms"]["compute"]["estimate"].get<uint64_t>() == j["terms"]["compute"]["llama_cpp"].get<uint64_t>());
            CHECK(j["note"].get<std::string>().find("upstream export") != std::string::npos);
        }
    // As stored (as_is), the estimate describes the stored file: qwen25vl's vision tower counts.
    auto model = open_model(demo("ollama-qwen25vl.gguf"));
    REQUIRE(model);
    auto exported = estimate_memory(*model, MemoryPlanOptions{});
    auto stored = estimate_memory(*model, MemoryPlanOptions{}, true);
    REQUIRE(exported);
    REQUIRE(stored);
    CHECK(exported->through_export);
    CHECK_FALSE(stored->through_export);
    CHECK(stored->terms.weights > 2 * exported->terms.weights);
}

TEST_CASE("mlens memory: a quantized KV cache whose blocks straddle the demo's 16-value heads is refused", "[memory][infer][cli]") {
    for (const char* kv_type : {"q8_0", "q4_0"}) {
        test::CliRun r = test::run_mlens({"memory", demo("tiny-llama-q4_0.gguf"), "--kv-type", kv_type});
        CHECK(r.exit_status == 1);
        CHECK(r.err.find("E_KV_TYPE") != std::string::npos);
    }
}

TEST_CASE("mlens memory refuses an unknown KV cache type as a usage error", "[memory][infer][cli]") {
    test::CliRun r = test::run_mlens({"memory", demo("tiny-llama-f32.gguf"), "--kv-type", "q3_k"});
    CHECK(r.exit_status == 2);
    CHECK(r.err.find("unknown KV cache type") != std::string::npos);
}

TEST_CASE("mlens memory says llama.cpp does not load a safetensors model, not that it names no architecture", "[memory][cli]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("model.safetensors"), test::s1_bytes());
    const std::string config = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"]})";
    test::write_whole_file(dir.file("config.json"), std::vector<uint8_t>(config.begin(), config.end()));
    for (const std::string& path : {dir.file("model.safetensors"), dir.path()}) {
        INFO(path);
        test::CliRun r = test::run_mlens({"memory", path});
        CHECK(r.exit_status == 1);
        CHECK(r.err.find("E_NOT_GGUF") != std::string::npos);
        CHECK(r.err.find("this is a safetensors model") != std::string::npos);
    }
}

TEST_CASE("mlens memory: repacked weights, a split model and an MoE model, term by term against llama.cpp", "[memory][infer][cli]") {
    test::TempDir dir;
    // Q4_0 matmuls of a 3-shard split whose first shard holds only the keys (the Llama-3
    // vocabulary's 128256 logits dominate the compute buffer).
    const std::string whole_path = dir.file("llama3-q4_0.gguf");
    test::write_tiny_model(retyped(test::tiny_llama3(test::TinyLayout::upstream), GGML_TYPE_Q4_0, GGML_TYPE_Q4_0), whole_path);
    auto whole = open_model(whole_path);
    REQUIRE(whole);
    const std::string split = test::write_split_gguf(*whole, dir.path(), "llama3-q4_0", 3, true);
    // gpt-oss with MXFP4 experts and Q4_0 attention, both repacked.
    const std::string moe = dir.file("gptoss-mxfp4.gguf");
    test::write_tiny_model(retyped(test::tiny_gptoss(test::TinyLayout::upstream), GGML_TYPE_Q4_0, GGML_TYPE_MXFP4), moe);
    for (const std::string& path : {whole_path, split, moe})
        for (uint32_t ctx : {256u, 2048u, 8192u}) {
            INFO(path << " ctx " << ctx);
            nlohmann::json j = memory_json(path, ctx);
            check_terms(j, 0.01);
            CHECK(j["estimate_weights"]["copied"]["CPU_REPACK"].get<uint64_t>() > 0);
        }
    // The split's weights are the sum of its shards' mappings and its repacked tensors.
    nlohmann::json one = memory_json(whole_path, 2048), three = memory_json(split, 2048);
    CHECK(three["estimate_weights"]["copied"] == one["estimate_weights"]["copied"]);
}

TEST_CASE("mlens memory: llama.cpp's plan equals its allocation on every demo model", "[memory][infer][cli]") {
    for (const char* model : {"tiny-llama-f32.gguf", "tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf", "ollama-gemma3.gguf", "ollama-qwen25vl.gguf"})
        for (uint32_t ctx : {256u, 2048u, 8192u}) {
            INFO(model << " ctx " << ctx);
            const nlohmann::json t = memory_json(demo(model), ctx)["terms"];
            for (const char* term : {"kv", "compute"}) CHECK(t[term]["plan"] == t[term]["llama_cpp"]);
        }
}
