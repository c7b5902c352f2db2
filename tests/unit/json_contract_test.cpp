// The JSON contract of mlens (model_json.h, README "JSON output"): tensor types as name plus ggml
// id (none for safetensors dtypes), shapes in the format's order with the order stated, cut
// arrays with their full length, tensors named by name, config lists as lists, absent as null.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

#include "build_paths.h"
#include "cli_runner.h"
#include "compat_fixture.h"
#include "mlens/compat/value_builders.h"
#include "ollama_store_builder.h"
#include "safetensors_builder.h"

using namespace mlens;
using namespace mlens::test;
using nlohmann::json;

namespace {

// glmocr fuses gate and up into one tensor (a byte concat) and hides the gate.
Model write_glmocr(const TempDir& dir) {
    return OllamaGguf("glmocr")
        .u32("glmocr.block_count", 1)
        .kv("glmocr.rope.mrope_section", compat::array_i32({8, 12, 12}))
        .tensor("blk.0.attn_out.weight", {8, 8})
        .tensor("blk.0.ffn_gate.weight", {8, 16})
        .tensor("blk.0.ffn_up.weight", {8, 16})
        .write(dir);
}

}  // namespace

TEST_CASE("tensors --json: safetensors dtypes by name without an id, shape slowest first", "[json]") {
    TempDir dir;
    SafetensorsBuilder b;
    b.tensor("w", "BF16", "[2,3]", std::vector<uint8_t>(12, 0));
    b.tensor("b", "F32", "[3]", std::vector<uint8_t>(12, 0));
    std::vector<uint8_t> bytes = b.bytes();
    write_file(dir.file("m.safetensors"), std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));

    json j = run_mlens_json({"tensors", dir.file("m.safetensors"), "--json"});
    REQUIRE(j.size() == 2);
    CHECK(j[0]["name"] == "w");
    CHECK(j[0]["type"] == "BF16");
    CHECK(j[0]["type_id"].is_null());
    CHECK(j[0]["shape"] == json::array({2, 3}));
    CHECK(j[0]["shape_order"] == "slowest_first");
    CHECK(j[0]["n_elements"] == 6);
    CHECK(j[1]["type"] == "F32");
    CHECK(j[1]["type_id"].is_null());
    CHECK(j[1]["shape"] == json::array({3}));

    json info = run_mlens_json({"info", dir.file("m.safetensors"), "--json"});
    CHECK(info["format"] == "safetensors");
    CHECK(info["version"].is_null());
    CHECK(info["architecture"].is_null());
    CHECK(info["name"].is_null());
    CHECK(info["file_type"].is_null());
    CHECK(info["file_type_name"].is_null());
    CHECK(info["parameters"] == 9);
}

TEST_CASE("tensors --json: GGUF types by name and ggml id, shape fastest first", "[json]") {
    TempDir dir;
    OllamaGguf("llama").tensor("blk.0.ffn_up.weight", {8, 16}, 1).write(dir);
    json j = run_mlens_json({"tensors", dir.file("model.gguf"), "--json"});
    REQUIRE(j.size() == 1);
    CHECK(j[0]["type"] == "F16");
    CHECK(j[0]["type_id"] == 1);
    CHECK(j[0]["shape"] == json::array({8, 16}));
    CHECK(j[0]["shape_order"] == "fastest_first");
    CHECK(j[0]["n_bytes"] == 256);
    CHECK(j[0]["quant"].is_null());
    CHECK(j[0]["part_of"].is_null());
}

TEST_CASE("dump --json marks cut arrays with their full length", "[json]") {
    const std::string path = std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf";
    auto find = [](const json& entries, const std::string& key) {
        for (const json& m : entries)
            if (m["key"] == key) return m;
        return json();
    };
    json cut = find(run_mlens_json({"dump", path, "--json"})["metadata"], "tokenizer.ggml.tokens");
    CHECK(cut["type"] == "ARRAY");
    CHECK(cut["element_type"] == "STRING");
    CHECK(cut["count"] == 32000);
    CHECK(cut["truncated"] == true);
    CHECK(cut["value"] == json::array({"<unk>", "<s>", "</s>", "<0x00>", "<0x01>", "<0x02>", "<0x03>", "<0x04>"}));

    json full = find(run_mlens_json({"dump", path, "--json", "--full"})["metadata"], "tokenizer.ggml.tokens");
    CHECK(full["truncated"] == false);
    CHECK(full["value"].size() == 32000);

    json scalar = find(run_mlens_json({"kv", path, "--json"}), "general.architecture");
    CHECK(scalar["type"] == "STRING");
    CHECK(scalar["element_type"].is_null());
    CHECK(scalar["count"].is_null());
    CHECK(scalar["truncated"].is_null());
    CHECK(scalar["value"] == "llama");
}

TEST_CASE("compat --json: types spelled like dump, tensors named by name", "[json][compat]") {
    TempDir dir;
    write_glmocr(dir);
    json j = run_mlens_json({"compat", dir.file("model.gguf"), "--json"});
    CHECK(j["shape_order"] == "fastest_first");
    const json& text = j["text"];
    json sections;
    for (const json& e : text["kv_edits"])
        if (e["key"] == "glm4.rope.dimension_sections") sections = e["result"];
    CHECK(sections == json({{"type", "ARRAY"}, {"element_type", "INT32"}, {"count", 4}, {"truncated", false}, {"value", {8, 12, 12, 0}}}));
    REQUIRE(text["data_ops"].size() == 1);
    const json& op = text["data_ops"][0];
    CHECK(op["dest"] == "blk.0.ffn_up.weight");
    CHECK(op["sources"] == json::array({"blk.0.ffn_gate.weight", "blk.0.ffn_up.weight"}));
    CHECK(op["dest_type"] == "F32");
    CHECK(op["dest_type_id"] == 0);
    CHECK(op["dest_shape"] == json::array({8, 32}));
    for (const json& e : text["tensor_edits"]) CHECK_FALSE(e.contains("slot"));
    // No string in the plan is "": what a rule or check does not have is null.
    for (const char* list : {"kv_edits", "tensor_edits", "data_ops"})
        for (const json& e : text[list]) CHECK((e["note"].is_null() || e["note"] != ""));
    for (const json& c : j["clip"]["checks"]) CHECK((c["arch"].is_null() || c["arch"] != ""));
    json clip_translation;
    for (const json& c : j["clip"]["checks"])
        if (c["rule"] == "translate_clip_metadata") clip_translation = c;
    CHECK(clip_translation["arch"].is_null());

    CliRun human = run_mlens({"compat", dir.file("model.gguf")});
    CHECK(human.out.find("byte concat → blk.0.ffn_up.weight (F32 [8, 32]) from blk.0.ffn_gate.weight blk.0.ffn_up.weight") !=
          std::string::npos);
}

TEST_CASE("compat of a safetensors model says the shim does not apply, and why", "[json][compat]") {
    TempDir dir;
    SafetensorsBuilder b;
    b.tensor("w", "F32", "[2]", std::vector<uint8_t>(8, 0));
    std::vector<uint8_t> bytes = b.bytes();
    write_file(dir.file("m.safetensors"), std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));

    json j = run_mlens_json({"compat", dir.file("m.safetensors"), "--json"});
    CHECK(j["applies"] == false);
    CHECK(j["not_applicable"] == "not a GGUF model (safetensors)");
    CHECK(j["empty"] == true);
    CliRun human = run_mlens({"compat", dir.file("m.safetensors")});
    CHECK(human.exit_status == 0);
    CHECK(human.out.find("nothing to rewrite: not a GGUF model (safetensors)") != std::string::npos);
    // No loader view of an architecture the file cannot have.
    CHECK(human.out.find("loader view") == std::string::npos);

    write_glmocr(dir);
    json gguf = run_mlens_json({"compat", dir.file("model.gguf"), "--json"});
    CHECK(gguf["applies"] == true);
    CHECK(gguf["not_applicable"].is_null());
}

TEST_CASE("export-upstream --json reports each file written", "[json][compat]") {
    TempDir dir;
    write_glmocr(dir);
    json j = run_mlens_json({"export-upstream", dir.file("model.gguf"), dir.file("out.gguf"), "--json"});
    CHECK(j["path"] == dir.file("model.gguf"));
    CHECK(j["text"]["arch_after"] == "glm4");
    CHECK(j["text"]["handlers"] == json::array({"handle_glmocr"}));
    CHECK(j["clip"]["empty"] == true);
    REQUIRE(j["files"].size() == 1);
    const json& f = j["files"][0];
    CHECK(f["side"] == "text");
    CHECK(f["path"] == dir.file("out.gguf"));
    CHECK(f["bytes"] == std::filesystem::file_size(dir.file("out.gguf")));
    CHECK(f["tensors"] == 2);
    CHECK(f["data_ops"] == 1);
}

TEST_CASE("show --json: config lists as lists, absent fields null", "[json][ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    json config = run_mlens_json({"show", "tiny", "--store", dir.path(), "--json"})["config"];
    CHECK(config["model_family"] == "llama");
    CHECK(config["model_families"] == json::array({"llama"}));
    CHECK(config["model_families_count"] == 1);
    CHECK(config["capabilities"].is_null());
    CHECK(config["capabilities_count"] == 0);
    CHECK(config["renderer"].is_null());
    CHECK(config["context_length"].is_null());
    CHECK(config["draft"].is_null());
    CHECK(config["rootfs"].is_null());
}

TEST_CASE("diff --json: value types spelled like dump, the missing side null", "[json][diff]") {
    const std::string demo = MLENS_DEMO_DIR;
    json j = run_mlens_json({"diff", demo + "/tiny-llama-f32.gguf", demo + "/ollama-gemma3.gguf", "--json"});
    CHECK(j["name_map"].is_null());
    CHECK(j["shape_order"] == "fastest_first");
    std::map<std::string, json> by_key;
    for (const json& m : j["metadata"]) by_key[m["key"]] = m;
    const json& tokens = by_key["tokenizer.ggml.tokens"];
    CHECK(tokens["type_a"] == "ARRAY");
    CHECK(tokens["element_type_a"] == "STRING");
    CHECK(tokens["type_b"] == "ARRAY");
    CHECK(tokens["element_type_b"] == "STRING");
    const json& name = by_key["general.name"];
    CHECK(name["change"] == "removed");
    CHECK(name["type_a"] == "STRING");
    CHECK(name["element_type_a"].is_null());
    CHECK(name["type_b"].is_null());
    CHECK(name["value_b"].is_null());
    REQUIRE(!j["tensors"].empty());
    CHECK(j["tensors"][0]["name_a"] == "token_embd.weight");
    CHECK(j["tensors"][0]["shape_a"] == json::array({64, 32000}));
    CHECK(j["tensors"][0]["shape_b"] == json::array({64, 320}));
}
