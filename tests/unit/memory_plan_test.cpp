// mlens memory: the estimate from the file against what llama.cpp allocates, on the demo models.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>

#include "cli_runner.h"

using namespace mlens;

namespace {

std::string demo(const std::string& name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

nlohmann::json memory_json(const std::string& model, uint32_t ctx, const std::string& kv_type) {
    return test::run_mlens_json({"memory", demo(model), "--ctx", std::to_string(ctx), "--kv-type", kv_type, "--threads", "1", "--json"});
}

// The demo llama: 2 layers, 2 KV heads of 16 values, so K and V are 32 values a cell and layer.
uint64_t demo_kv_bytes(uint32_t ctx, const std::string& kv_type) {
    const uint64_t row = kv_type == "f16" ? 32 * 2 : 32 * 4;
    return 2ull * ctx * 2 * row;
}

}  // namespace

TEST_CASE("mlens memory: KV exact and every term within 5% of llama.cpp's buffers", "[memory][infer][cli]") {
    for (const char* model : {"tiny-llama-f32.gguf", "tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf"})
        for (uint32_t ctx : {256u, 2048u, 8192u}) {
            nlohmann::json j = memory_json(model, ctx, "f16");
            INFO(model << " ctx " << ctx << ": " << j.dump());
            const nlohmann::json& t = j["terms"];
            CHECK(t["kv"]["estimate"].get<uint64_t>() == t["kv"]["llama_cpp"].get<uint64_t>());
            CHECK(t["kv"]["llama_cpp"].get<uint64_t>() == demo_kv_bytes(ctx, "f16"));
            for (const char* term : {"weights", "compute", "total"}) CHECK(std::fabs(t[term]["relative_error"].get<double>()) <= 0.05);
        }
    nlohmann::json j = memory_json("tiny-llama-q4_0.gguf", 2048, "f32");
    CHECK(j["terms"]["kv"]["estimate"].get<uint64_t>() == j["terms"]["kv"]["llama_cpp"].get<uint64_t>());
    CHECK(j["terms"]["kv"]["llama_cpp"].get<uint64_t>() == demo_kv_bytes(2048, "f32"));
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
