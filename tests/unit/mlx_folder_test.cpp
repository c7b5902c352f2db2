// An MLX quantized folder (config.json "quantization"; P.weight with P.scales and P.biases) opens
// with each quantized module as one logical tensor: a hand-computed folder pins the values, the
// per-module overrides (an object, or false) and the warnings; every MLX export of the demo store
// re-opens with values equal to the store model's; `mlens diff` pairs a store model with its MLX
// export and finds no difference but the tensor the export writes dequantized.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "build_paths.h"
#include "cli_runner.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/model/logical_tensors.h"
#include "mlens/ollama/store_export.h"
#include "mlens/quant/tensor_view.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;
namespace fs = std::filesystem;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

std::vector<uint8_t> le32(std::initializer_list<uint32_t> words) {
    std::vector<uint8_t> out;
    for (uint32_t w : words)
        for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
    return out;
}

std::vector<float> values(const TensorView& view) {
    std::vector<float> v(view.size());
    REQUIRE(view.read(0, v.size(), v.data()));
    return v;
}

size_t index_of(const Model& m, const std::string& name) {
    const TensorInfo* t = m.find_tensor(name);
    INFO(name);
    REQUIRE(t);
    return static_cast<size_t>(t - m.tensors.data());
}

const std::string kQ = "model.layers.0.self_attn.q_proj", kK = "model.layers.0.self_attn.k_proj", kGate = "model.layers.0.mlp.gate_proj",
                  kUp = "model.layers.0.mlp.up_proj";

// int4 g32 affine by default (no "mode"), gate_proj nvfp4 g16 by its own entry, up_proj not
// quantized (false) although it has scales, and k_proj with two scales for its one group.
std::string hand_folder(const TempDir& dir, const std::string& config) {
    SafetensorsBuilder b;
    b.tensor(kQ + ".weight", "U32", "[1,4]", le32({0x76543210, 0xFEDCBA98, 0x01234567, 0x89ABCDEF}));
    b.tensor(kQ + ".scales", "BF16", "[1,1]", {0x00, 0x3F});  // 0.5
    b.tensor(kQ + ".biases", "BF16", "[1,1]", {0x80, 0xBF});  // -1.0
    b.tensor(kK + ".weight", "U32", "[1,4]", le32({0, 0, 0, 0}));
    b.tensor(kK + ".scales", "BF16", "[1,2]", {0x00, 0x3F, 0x00, 0x3F});
    b.tensor(kK + ".biases", "BF16", "[1,2]", {0x00, 0x00, 0x00, 0x00});
    b.tensor(kGate + ".weight", "U32", "[1,2]", le32({0x76543210, 0xFEDCBA98}));
    b.tensor(kGate + ".scales", "U8", "[1,1]", {0x40});  // E4M3 2.0
    b.tensor(kUp + ".weight", "U32", "[1,1]", le32({7}));
    b.tensor(kUp + ".scales", "BF16", "[1,1]", {0x00, 0x3F});
    const std::string folder = dir.file("mlx");
    fs::create_directories(folder);
    write_whole_file(folder + "/model.safetensors", b.bytes());
    write_whole_file(folder + "/config.json", std::vector<uint8_t>(config.begin(), config.end()));
    return folder;
}

// The one diagnostic of a folder opened with `code` about its config.json; its message.
std::string only_config_warning(const Result<Model>& m, ErrorCode code) {
    REQUIRE(m);
    REQUIRE(m->diagnostics.size() == 1);
    CHECK(m->diagnostics[0].code == code);
    CHECK(m->diagnostics[0].field == "file:config.json");
    for (const TensorInfo& t : m->tensors) CHECK_FALSE(t.quant);
    return m->diagnostics[0].message;
}

}  // namespace

TEST_CASE("a hand-written MLX folder opens with its quantized modules as logical tensors", "[mlx][folder]") {
    TempDir dir;
    auto m = open_safetensors_folder(hand_folder(dir, R"({"model_type":"llama","quantization":{"group_size":32,"bits":4,
        "model.layers.0.mlp.gate_proj":{"group_size":16,"bits":4,"mode":"nvfp4"},"model.layers.0.mlp.up_proj":false}})"));
    REQUIRE(m);
    REQUIRE(m->error_count() == 0);
    REQUIRE(m->diagnostics.size() == 1);
    CHECK(m->diagnostics[0].code == ErrorCode::W_QUANT_SHAPE_MISMATCH);
    CHECK(m->diagnostics[0].field == kK + ".weight");

    const TensorInfo& q = m->tensors[index_of(*m, kQ + ".weight")];
    REQUIRE(q.quant);
    CHECK(q.quant->type == "int4");
    CHECK(q.quant->mode == "affine");
    CHECK(q.quant->group_size == 32);
    CHECK(q.quant->origin == "config.json quantization");
    CHECK(q.quant->logical_ne == std::vector<uint64_t>{32, 1});
    CHECK(q.quant->scale == index_of(*m, kQ + ".scales"));
    CHECK(q.quant->bias == index_of(*m, kQ + ".biases"));
    CHECK(m->tensors[index_of(*m, kQ + ".scales")].part_of == index_of(*m, kQ + ".weight"));
    auto qv = TensorView::open(*m, kQ + ".weight");
    REQUIRE(qv);
    CHECK(qv->type_name() == "int4 g32");
    // w = code x 0.5 - 1, codes from the low nibble up: 0..7, 8..15, 7..0, 15..8.
    std::vector<float> expected;
    for (uint32_t word : {0x76543210u, 0xFEDCBA98u, 0x01234567u, 0x89ABCDEFu})
        for (int j = 0; j < 8; ++j) expected.push_back(static_cast<float>((word >> (4 * j)) & 0xF) * 0.5f - 1.0f);
    CHECK(values(*qv) == expected);

    const TensorInfo& gate = m->tensors[index_of(*m, kGate + ".weight")];
    REQUIRE(gate.quant);
    CHECK(gate.quant->origin == "config.json quantization." + kGate);
    CHECK_FALSE(gate.quant->bias);
    auto gv = TensorView::open(*m, kGate + ".weight");
    REQUIRE(gv);
    CHECK(gv->type_name() == "nvfp4 g16");
    CHECK(values(*gv) == std::vector<float>{0, 1, 2, 3, 4, 6, 8, 12, -0.0f, -1, -2, -3, -4, -6, -8, -12});

    // Not quantized by its own entry: the packed words and the scales stay separate tensors.
    CHECK_FALSE(m->tensors[index_of(*m, kUp + ".weight")].quant);
    CHECK_FALSE(m->tensors[index_of(*m, kUp + ".scales")].part_of);
    // Two scales for one group: described (with the warning) but refused when decoded.
    auto kv = TensorView::open(*m, kK + ".weight");
    REQUIRE_FALSE(kv);
    CHECK(kv.error().code == ErrorCode::E_SHAPE);

    // q, k, gate as one tensor each; up_proj's weight and scales by themselves.
    CHECK(logical_tensors(*m).size() == 5);
}

TEST_CASE("an MLX folder whose quantization has no usable group size and bits keeps its packed tensors", "[mlx][folder]") {
    TempDir dir;
    only_config_warning(open_safetensors_folder(hand_folder(dir, R"({"quantization":{"bits":4}})")), ErrorCode::W_QUANT_UNKNOWN);
    // A Hugging Face quantization_config of another method is not MLX's.
    TempDir other;
    auto hf = open_safetensors_folder(hand_folder(other, R"({"quantization_config":{"quant_method":"gptq","bits":4,"group_size":32}})"));
    REQUIRE(hf);
    CHECK(hf->diagnostics.empty());
    for (const TensorInfo& t : hf->tensors) CHECK_FALSE(t.quant);
}

TEST_CASE("every MLX export of the demo store re-opens as logical tensors with the store model's values", "[mlx][folder][store_export]") {
    auto store = Store::open(kDemoStore);
    REQUIRE(store);
    for (const std::string ref :
         {"tiny-mlx:mixed", "tiny-moe:int4", "tiny-moe-shared:int4", "tiny-moe-legacy:per-expert", "tiny-moe-legacy:switch-mlp"}) {
        INFO(ref);
        TempDir dir;
        StoreExportOptions options;
        options.format = ExportFormat::mlx;
        auto prepared = prepare_store_export(*store, *parse_model_reference(ref), options);
        REQUIRE(prepared);
        REQUIRE(write_store_export(*prepared, dir.file("out")));
        auto folder = open_safetensors_folder(dir.file("out"));
        REQUIRE(folder);
        CHECK(folder->diagnostics.empty());
        const Model& source = prepared->model;
        size_t quantized = 0, experts = 0;
        for (const LogicalTensor& lt : logical_tensors(*folder)) {
            const TensorInfo& t = folder->tensors[lt.index];
            INFO(t.name);
            if (!t.quant) continue;
            ++quantized;
            auto view = TensorView::open(*folder, lt.index);
            REQUIRE(view);
            const size_t at = t.name.find(".switch_mlp.");
            if (at != std::string::npos) experts += view->shape().back();
            // The store's tensor of that name, else the switch_mlp tensor's experts, stacked in the
            // store (".experts.<part>") or one tensor each (".experts.<e>.<part>").
            if (source.find_tensor(t.name)) {
                auto original = TensorView::open(source, t.name);
                REQUIRE(original);
                CHECK(view->type_name() == original->type_name());
                CHECK(view->shape() == original->shape());
                CHECK(values(*view) == values(*original));
                continue;
            }
            REQUIRE(at != std::string::npos);
            const std::string block = t.name.substr(0, at), part = t.name.substr(at + 12);
            if (source.find_tensor(block + ".experts." + part)) {
                auto original = TensorView::open(source, block + ".experts." + part);
                REQUIRE(original);
                CHECK(values(*view) == values(*original));
                continue;
            }
            for (uint64_t e = 0; e < view->shape().back(); ++e) {
                auto original = TensorView::open(source, block + ".experts." + std::to_string(e) + "." + part);
                REQUIRE(original);
                auto slice = view->slice(e);
                REQUIRE(slice);
                CHECK(slice->type_name() == original->type_name());
                CHECK(values(*slice) == values(*original));
            }
        }
        CHECK(quantized > 0);
        if (ref != "tiny-mlx:mixed") CHECK(experts > 0);
    }
}

TEST_CASE("mlens diff of a store model and its MLX export finds only the tensor written dequantized", "[mlx][folder][diff][cli]") {
    for (const std::string ref : {"tiny-moe:int4", "tiny-moe-legacy:per-expert", "tiny-mlx:mixed"}) {
        INFO(ref);
        TempDir dir;
        CliRun exported = run_mlens({"export", ref, dir.file("out"), "--store", kDemoStore, "--format", "mlx"});
        REQUIRE(exported.exit_status == 0);
        CliRun diff = run_mlens({"diff", kDemoStore + "/" + ref, dir.file("out"), "--numeric", "--json"});
        INFO(diff.err);
        REQUIRE(diff.exit_status == 0);
        nlohmann::json d = nlohmann::json::parse(diff.out);
        std::vector<std::string> differing;
        for (const nlohmann::json& t : d["tensors"]) {
            for (const char* change : {"added", "removed"})
                CHECK(std::find(t["changes"].begin(), t["changes"].end(), change) == t["changes"].end());
            if (std::find(t["changes"].begin(), t["changes"].end(), "values") != t["changes"].end())
                differing.push_back(t["name_b"].get<std::string>());
            else
                CHECK(t["error"]["max_abs"] == 0.0);
        }
        // The export README: nvfp4 with a global scale, which MLX cannot hold, is written as BF16.
        CHECK(differing ==
              (ref == "tiny-mlx:mixed" ? std::vector<std::string>{"model.layers.0.self_attn.o_proj.weight"} : std::vector<std::string>{}));
    }
}

TEST_CASE("a config.json that cannot be read or is no JSON object is a warning, never silently ignored", "[mlx][folder]") {
    const std::string quantized = R"({"quantization":{"group_size":32,"bits":4}})";
    // Not JSON: the folder shows its raw entries, and says why.
    TempDir broken;
    const std::string said =
        only_config_warning(open_safetensors_folder(hand_folder(broken, R"({"quantization":{"group_size":32,)")), ErrorCode::W_SIDE_FILE_SKIPPED);
    CHECK(said.find("config.json is not a JSON object") != std::string::npos);
    // A FIFO, a folder and a dangling symlink in its place: never opened for reading (no hang),
    // each named.
    for (const std::string kind : {"fifo", "folder", "dangling"}) {
        INFO(kind);
        TempDir dir;
        const std::string folder = hand_folder(dir, quantized);
        fs::remove(folder + "/config.json");
        if (kind == "fifo") REQUIRE(::mkfifo((folder + "/config.json").c_str(), 0600) == 0);
        if (kind == "folder") fs::create_directory(folder + "/config.json");
        if (kind == "dangling") fs::create_symlink(folder + "/absent.json", folder + "/config.json");
        CHECK(only_config_warning(open_safetensors_folder(folder), ErrorCode::W_SIDE_FILE_SKIPPED).starts_with("cannot be read: "));
    }
}
