// `mlens tensors` and `mlens info` on tensor-blob models of the demo store: logical tensors (a
// packed weight, its scale and bias in one row with its logical shape and real bits per weight),
// expert groups under the table, one parameter count, and the architecture from config.json.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

#include "build_paths.h"
#include "cli_runner.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens::test;

namespace {

const std::string kStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

// The printed line that starts with `name` followed by a space, or "".
std::string line_of(const std::string& out, const std::string& name) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(name + " ")) return line;
    return {};
}

bool has_line_ending(const std::string& out, const std::string& suffix) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        std::string name = line.substr(0, line.find(' '));
        if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("mlens tensors lists a tensor-blob model's logical tensors", "[logical][cli]") {
    const std::string q = "model.layers.0.self_attn.q_proj.weight";
    CliRun run = run_mlens({"tensors", kStore + "/tiny-mlx:mixed"});
    INFO(run.out << run.err);
    REQUIRE(run.exit_status == 0);
    const std::string row = line_of(run.out, q);
    REQUIRE(!row.empty());
    // int4 g64, 64 x 64 logical values, 2048 packed bytes + 128 of scales + 128 of biases: 4.50 bits.
    CHECK(row.find(" int4 g64 ") != std::string::npos);
    CHECK(row.find(" [64, 64] ") != std::string::npos);
    CHECK(row.find(" 4096 ") != std::string::npos);
    CHECK(row.find(" 2304 ") != std::string::npos);
    CHECK(row.substr(row.size() - 4) == "4.50");
    CHECK(!has_line_ending(run.out, ".scale"));
    CHECK(!has_line_ending(run.out, ".bias"));
    CHECK(!has_line_ending(run.out, ".global_scale"));

    CliRun json = run_mlens({"tensors", kStore + "/tiny-mlx:mixed", "--json"});
    REQUIRE(json.exit_status == 0);
    auto j = nlohmann::json::parse(json.out);
    REQUIRE(j.size() == 12);
    const nlohmann::json& t = j[2];
    CHECK(t["name"] == q);
    CHECK(t["type"] == "int4 g64");
    CHECK(t["shape"] == nlohmann::json::array({64, 64}));
    CHECK(t["shape_order"] == "slowest_first");
    CHECK(t["n_elements"] == 4096);
    CHECK(t["n_bytes"] == 2304);
    CHECK(t["bits_per_weight"] == 4.5);
    CHECK(t["type_id"].is_null());
    CHECK(t["quant"]["mode"] == "affine");
    CHECK(t["quant"]["group_size"] == 64);
    REQUIRE(t["stored"].size() == 3);
    CHECK(t["stored"][0]["role"] == "packed");
    CHECK(t["stored"][0]["type"] == "U32");
    CHECK(t["stored"][0]["shape"] == nlohmann::json::array({64, 8}));
    CHECK(t["stored"][1]["name"] == q + ".scale");
    CHECK(t["stored"][2]["role"] == "bias");
    CHECK(t["stored"][2]["n_bytes"] == 128);
    CHECK(j[0]["type"] == "BF16");
    CHECK(j[0]["bits_per_weight"] == 16.0);
    CHECK(j[0]["type_id"].is_null());  // a safetensors dtype has no GGUF id
    uint64_t parameters = 0;
    for (const auto& e : j) parameters += e["n_elements"].get<uint64_t>();
    CHECK(parameters == 41152);

    CliRun layers = run_mlens({"tensors", kStore + "/tiny-mlx:mixed", "--by-layer", "--json"});
    REQUIRE(layers.exit_status == 0);
    auto l = nlohmann::json::parse(layers.out);
    REQUIRE(l.size() == 2);
    CHECK(l[0]["layer"] == 0);
    CHECK(l[0]["tensors"].size() == 9);
    CHECK(l[0]["parameters"] == 4096 + 2048 + 2048 + 4096 + 3 * 8192 + 2 * 64);
    CHECK(l[1]["parameters"] == 2048 + 64 + 2048);
}

TEST_CASE("mlens tensors names the expert groups of a tensor-blob model", "[logical][cli]") {
    CliRun run = run_mlens({"tensors", kStore + "/tiny-moe:int4"});
    INFO(run.out << run.err);
    REQUIRE(run.exit_status == 0);
    const std::string row = line_of(run.out, "model.layers.0.mlp.experts.gate_proj.weight");
    CHECK(row.find(" int4 g64 ") != std::string::npos);
    CHECK(row.find(" [4, 64, 64] ") != std::string::npos);  // slowest first, as safetensors stores it
    const std::string group = line_of(run.out, "model.layers.0.mlp.experts");
    CHECK(group.find(" 4 ") != std::string::npos);
    CHECK(group.find("{down_proj,gate_proj,up_proj}") != std::string::npos);
    CHECK(group.find("stacked, every projection in one group blob (current layout)") != std::string::npos);

    CliRun json = run_mlens({"tensors", kStore + "/tiny-moe:int4", "--json"});
    REQUIRE(json.exit_status == 0);
    auto j = nlohmann::json::parse(json.out);
    bool found = false;
    for (const auto& t : j) {
        if (t["name"] != "model.layers.0.mlp.experts.up_proj.weight") continue;
        found = true;
        CHECK(t["group"]["name"] == "model.layers.0.mlp.experts");
        CHECK(t["group"]["experts"] == 4);
        CHECK(!t["group"].contains("expert"));
    }
    CHECK(found);
}

TEST_CASE("mlens info counts logical tensors and reads the architecture from config.json", "[logical][cli]") {
    CliRun run = run_mlens({"info", kStore + "/tiny-mlx:mixed"});
    INFO(run.out << run.err);
    REQUIRE(run.exit_status == 0);
    CHECK(line_of(run.out, "architecture").find("qwen3 (config.json model_type)") != std::string::npos);
    CHECK(line_of(run.out, "tensors").find("12 (stored as 25 entries with their scales and biases)") != std::string::npos);
    CHECK(line_of(run.out, "parameters").find("(41152)") != std::string::npos);

    CliRun json = run_mlens({"info", kStore + "/tiny-mlx:mixed", "--json"});
    REQUIRE(json.exit_status == 0);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["format"] == "safetensors");
    CHECK(j["architecture"] == "qwen3");
    CHECK(j["architecture_source"] == "config.json model_type");
    CHECK(j["parameters"] == 41152);
    CHECK(j["tensor_count"] == 12);
    CHECK(j["stored_tensor_count"] == 25);

    CliRun gguf = run_mlens({"info", std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf"});
    REQUIRE(gguf.exit_status == 0);
    CHECK(line_of(gguf.out, "architecture").find("llama") != std::string::npos);
    CHECK(line_of(gguf.out, "architecture").find("(") == std::string::npos);
    CHECK(line_of(gguf.out, "tensors").find("stored") == std::string::npos);
}

TEST_CASE("a quant type the file declares is escaped in the tensor table", "[logical][cli]") {
    TempDir dir;
    SafetensorsBuilder blob;
    // An unknown type is kept as declared (read as Ollama's 8-bit fallback): here with an escape sequence.
    blob.metadata("quant_type", "evil\\u001b[2J").metadata("group_size", "32");
    blob.tensor("w", "U32", "[4,8]", std::vector<uint8_t>(128));
    blob.tensor("w.scale", "BF16", "[4,1]", std::vector<uint8_t>(8));
    blob.tensor("w.bias", "BF16", "[4,1]", std::vector<uint8_t>(8));
    write_whole_file(dir.file("blob"), blob.bytes());
    CliRun run = run_mlens({"tensors", dir.file("blob")});
    INFO(run.out << run.err);
    REQUIRE(run.exit_status == 0);
    CHECK(run.out.find('\x1b') == std::string::npos);
    CHECK(line_of(run.out, "w").find(" [4, 32] ") != std::string::npos);
    CliRun layers = run_mlens({"tensors", dir.file("blob"), "--by-layer"});
    REQUIRE(layers.exit_status == 0);
    CHECK(layers.out.find('\x1b') == std::string::npos);
}
