// `mlens export --format hf|mlx` of tensor-blob store models: every model of the demo store
// (every quantization mode and expert layout) written, re-opened and verified with no failure,
// per-expert Hugging Face names and MLX switch_mlp stacking, exactness per mode, shards and their
// index, and a hand-computed int4 and nvfp4 tensor whose MLX bytes and HF values are pinned.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "build_paths.h"
#include "cli_runner.h"
#include "diagnostic_checks.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/ollama/store_export.h"
#include "mlens/quant/tensor_view.h"
#include "ollama_store_builder.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;
namespace fs = std::filesystem;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

struct Exported {
    PreparedExport prepared;
    StoreExportReport report;
    Model folder;
};

Exported export_model(const std::string& root, const std::string& reference, const std::string& out, StoreExportOptions options) {
    auto store = Store::open(root);
    REQUIRE(store);
    auto name = parse_model_reference(reference);
    REQUIRE(name);
    auto prepared = prepare_store_export(*store, *name, options);
    INFO(reference << ": " << (prepared ? std::string() : prepared.error().to_string()));
    REQUIRE(prepared);
    auto report = write_store_export(*prepared, out);
    INFO(reference << ": " << (report ? std::string() : report.error().to_string()));
    REQUIRE(report);
    auto folder = open_safetensors_folder(out);
    REQUIRE(folder);
    CHECK(folder->error_count() == 0);
    // The folder has the mode a plain mkdir gives (0777 less the umask), not mkdtemp's 0700.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    struct stat st {};
    REQUIRE(::stat(out.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == (0777 & ~mask));
    return {std::move(*prepared), std::move(*report), std::move(*folder)};
}

StoreExportOptions options_for(ExportFormat format, std::optional<HfDtype> dtype = std::nullopt) {
    StoreExportOptions o;
    o.format = format;
    o.dtype = dtype;
    return o;
}

std::vector<uint8_t> tensor_bytes(const Model& m, const std::string& name) {
    const TensorInfo& t = tensor(m, name);
    std::vector<uint8_t> bytes(*t.n_bytes);
    REQUIRE(m.read_tensor_bytes(static_cast<size_t>(&t - m.tensors.data()), 0, bytes.size(), bytes.data()));
    return bytes;
}

std::vector<float> tensor_values(const Model& m, const std::string& name) {
    auto view = TensorView::open(m, name);
    REQUIRE(view);
    std::vector<float> v(view->size());
    REQUIRE(view->read(0, v.size(), v.data()));
    return v;
}

const QuantExactness* mode(const StoreExportReport& r, const std::string& name) {
    for (const QuantExactness& m : r.verification.modes)
        if (m.mode == name) return &m;
    return nullptr;
}

std::vector<uint8_t> le32(std::initializer_list<uint32_t> words) {
    std::vector<uint8_t> out;
    for (uint32_t w : words)
        for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
    return out;
}

// One int4 g32 tensor (1 x 32) and one nvfp4 tensor (1 x 16), each in its own blob, with
// hand-chosen codes and scales.
std::string hand_store(const TempDir& dir) {
    const std::string root = dir.file("store");
    fs::create_directories(root);
    OllamaStoreBuilder b(root);
    const std::string q = "model.layers.0.self_attn.q_proj.weight", g = "model.layers.0.mlp.gate_proj.weight";
    SafetensorsBuilder int4, nvfp4;
    int4.metadata("group_size", "32").metadata("quant_type", "int4");
    int4.tensor(q, "U32", "[1,4]", le32({0x76543210, 0xFEDCBA98, 0x01234567, 0x89ABCDEF}));
    int4.tensor(q + ".bias", "BF16", "[1,1]", {0x80, 0xBF});  // -1.0
    int4.tensor(q + ".scale", "BF16", "[1,1]", {0x00, 0x3F});  // 0.5
    nvfp4.metadata("group_size", "16").metadata("quant_type", "nvfp4");
    nvfp4.tensor(g, "U32", "[1,2]", le32({0x76543210, 0xFEDCBA98}));
    nvfp4.tensor(g + ".scale", "U8", "[1,1]", {0x40});  // E4M3 2.0
    std::vector<LayerSpec> layers = {
        b.blob(kTensorMediaType, int4.bytes(), q), b.blob(kTensorMediaType, nvfp4.bytes(), g),
        b.blob(kJsonMediaType, std::string(R"({"model_type":"llama","torch_dtype":"float32"})"), std::string("config.json"))};
    b.add_model("hand", layers, config_json("safetensors", "llama", "int4"));
    return root;
}

}  // namespace

TEST_CASE("store export: every tensor-blob model of the demo store as hf and mlx, verified with no failure", "[store_export]") {
    const std::vector<std::string> models = {"tiny-mlx:mixed", "tiny-moe:int4", "tiny-moe-shared:int4", "tiny-moe-legacy:per-expert",
                                             "tiny-moe-legacy:switch-mlp"};
    for (const std::string& ref : models) {
        for (ExportFormat format : {ExportFormat::hf, ExportFormat::mlx}) {
            TempDir dir;
            Exported e = export_model(kDemoStore, ref, dir.file("out"),
                                      options_for(format, format == ExportFormat::hf ? std::optional(HfDtype::f32) : std::nullopt));
            INFO(ref << " " << export_format_name(format));
            CHECK(e.report.verification.failures == 0);
            CHECK(e.report.verification.tensors_checked == e.folder.tensors.size());
            for (const ExportFile& f : e.prepared.plan.files) CHECK(fs::file_size(dir.file("out/" + f.name)) == f.bytes);
            if (format == ExportFormat::hf)
                for (const QuantExactness& m : e.report.verification.modes) CHECK(m.exact());  // F32 holds every value
        }
    }
}

TEST_CASE("store export hf: expert groups unpacked to per-expert names in every layout", "[store_export]") {
    struct Case {
        std::string ref, name;
        std::vector<uint64_t> ne;
        size_t tensors;
    };
    // ne in GGUF order: [in, out].
    const std::vector<Case> cases = {
        {"tiny-moe:int4", "model.layers.0.mlp.experts.3.up_proj.weight", {64, 64}, 2 + 3 * 4},
        {"tiny-moe-shared:int4", "model.layers.0.mlp.experts.2.down_proj.weight", {64, 64}, 2 + 3 * 4 + 3},
        {"tiny-moe-legacy:per-expert", "model.layers.0.mlp.experts.1.gate_proj.weight", {64, 64}, 2 + 3 * 4 + 3},
        {"tiny-moe-legacy:switch-mlp", "model.layers.0.mlp.experts.0.down_proj.weight", {64, 64}, 2 + 3 * 4},
    };
    for (const Case& c : cases) {
        TempDir dir;
        Exported e = export_model(kDemoStore, c.ref, dir.file("out"), options_for(ExportFormat::hf));
        INFO(c.ref);
        CHECK(e.folder.tensors.size() == c.tensors);
        const TensorInfo& t = tensor(e.folder, c.name);
        CHECK(t.type.name == "BF16");  // no torch_dtype in the demo configs: the default
        CHECK(t.ne == c.ne);
        for (const TensorInfo& w : e.folder.tensors) {
            CHECK(w.name.find("switch_mlp") == std::string::npos);
            CHECK(w.name.find("mlp.experts.gate_proj") == std::string::npos);
        }
    }
    // The values of an unpacked expert are the stacked tensor's slice, rounded to BF16.
    TempDir dir;
    Exported e = export_model(kDemoStore, "tiny-moe:int4", dir.file("out"), options_for(ExportFormat::hf, HfDtype::f32));
    auto stacked = TensorView::open(e.prepared.model, "model.layers.0.mlp.experts.up_proj.weight");
    REQUIRE(stacked);
    auto slice = stacked->slice(3);
    REQUIRE(slice);
    std::vector<float> expected(slice->size());
    REQUIRE(slice->read(0, expected.size(), expected.data()));
    CHECK(tensor_values(e.folder, "model.layers.0.mlp.experts.3.up_proj.weight") == expected);
}

TEST_CASE("store export hf: exactness per quantization mode in BF16", "[store_export]") {
    TempDir dir;
    Exported e = export_model(kDemoStore, "tiny-mlx:mixed", dir.file("out"), options_for(ExportFormat::hf, HfDtype::bf16));
    CHECK(e.report.verification.failures == 0);
    // E2M1 x E4M3, E2M1 x 2^k and E4M3 x 2^k need at most 5 significant bits: BF16 holds them.
    for (const char* exact : {"nvfp4 g16", "mxfp4 g32", "mxfp8 g32", "plain BF16"}) {
        const QuantExactness* m = mode(e.report, exact);
        INFO(exact);
        REQUIRE(m);
        CHECK(m->exact());
    }
    // A global scale multiplies after the E4M3 scale: the product may need more bits.
    const QuantExactness* global = mode(e.report, "nvfp4 g16 + global scale");
    REQUIRE(global);
    CHECK(global->tensors == 1);
    CHECK(global->values == 64 * 64);
    // Affine q x scale + bias needs more bits than BF16 has.
    const QuantExactness* int8 = mode(e.report, "int8 g64");
    REQUIRE(int8);
    CHECK(int8->tensors == 2);
    CHECK_FALSE(int8->exact());
    CHECK(int8->worst_error > 0);
    CHECK(int8->worst_error < 0.01);
}

TEST_CASE("store export hf: shards of a bounded size and their index", "[store_export]") {
    TempDir dir;
    StoreExportOptions options = options_for(ExportFormat::hf, HfDtype::f32);
    options.shard_limit = 40000;
    Exported e = export_model(kDemoStore, "tiny-moe:int4", dir.file("out"), options);
    const auto& shards = e.prepared.plan.hf.shards;
    // The embedding (32 x 64 F32, 8192 bytes) and q_proj (64 x 64, 16384 bytes) fill the first shard,
    // then the 12 experts' tensors (down, gate, up as the blob sorts them) two per shard.
    REQUIRE(shards.size() == 7);
    CHECK(shards[0].file == "model-00001-of-00007.safetensors");
    CHECK(shards[6].file == "model-00007-of-00007.safetensors");
    for (const HfShard& s : shards) CHECK(s.tensors.size() <= 2);
    nlohmann::json index = nlohmann::json::parse(read_whole_file(dir.file("out/model.safetensors.index.json")));
    CHECK(index["metadata"]["total_size"] == e.prepared.plan.hf.tensor_bytes);
    CHECK(index["weight_map"].size() == 14);
    CHECK(index["weight_map"]["model.layers.0.mlp.experts.3.down_proj.weight"] == "model-00003-of-00007.safetensors");
    CHECK(index["weight_map"]["model.layers.0.mlp.experts.3.up_proj.weight"] == "model-00007-of-00007.safetensors");
    CHECK(e.report.verification.failures == 0);
    // config.json says what the folder holds: F32 tensors (--dtype f32), nothing quantized.
    const nlohmann::json config = nlohmann::json::parse(read_whole_file(dir.file("out/config.json")));
    CHECK(config["torch_dtype"] == "float32");
    CHECK(!config.contains("quantization"));
    CHECK(!config.contains("quantization_config"));
}

TEST_CASE("store export hf: F16 kept losslessly by default, and a config.json with no quantization block", "[store_export]") {
    TempDir dir;
    Exported e = export_model(kDemoStore, "tiny-moe:int4", dir.file("out"), options_for(ExportFormat::hf, std::nullopt));
    CHECK(e.report.verification.failures == 0);
    CHECK(e.prepared.plan.hf.kept_float == 1);
    CHECK(e.prepared.plan.hf.dequantized == 4);
    // The F16 embedding is copied as stored, not rounded to BF16.
    auto folder = open_safetensors_folder(dir.file("out"));
    REQUIRE(folder.ok());
    const TensorInfo* embed = folder->find_tensor("model.embed_tokens.weight");
    REQUIRE(embed);
    CHECK(embed->type.name == "F16");
    // The source config.json carries an MLX quantization block; the folder's has none, and its
    // torch_dtype is the dtype of most of its bytes: the dequantized experts' BF16.
    const nlohmann::json source = nlohmann::json::parse(*e.prepared.model.get_string("file:config.json"));
    const nlohmann::json config = nlohmann::json::parse(read_whole_file(dir.file("out/config.json")));
    CHECK((source.contains("quantization") || source.contains("quantization_config")));
    CHECK(!config.contains("quantization"));
    CHECK(!config.contains("quantization_config"));
    CHECK(config["torch_dtype"] == "bfloat16");
    for (const auto& [key, value] : source.items())
        if (key != "quantization" && key != "quantization_config" && key != "torch_dtype") CHECK(config[key] == value);
    CHECK(e.prepared.plan.notes ==
          std::vector<std::string>{"4 quantized tensors written dequantized as BF16 (default)",
                                   "1 floating tensor copied in its own dtype, losslessly (--dtype converts them)",
                                   "12 expert tensors unpacked from stacked expert groups"});
}

TEST_CASE("store export mlx: per-expert and stacked groups become switch_mlp, quantized bit for bit", "[store_export]") {
    TempDir dir;
    Exported e = export_model(kDemoStore, "tiny-moe-legacy:per-expert", dir.file("out"), options_for(ExportFormat::mlx));
    CHECK(e.report.verification.failures == 0);
    const TensorInfo& w = tensor(e.folder, "model.layers.0.mlp.switch_mlp.gate_proj.weight");
    CHECK(w.type.name == "U32");
    CHECK(w.ne == std::vector<uint64_t>{8, 64, 4});  // int4 g32: 64 values in 8 words, 64 rows, 4 experts
    const TensorInfo& s = tensor(e.folder, "model.layers.0.mlp.switch_mlp.gate_proj.scales");
    CHECK(s.type.name == "BF16");
    CHECK(s.ne == std::vector<uint64_t>{2, 64, 4});
    CHECK(tensor(e.folder, "model.layers.0.mlp.switch_mlp.gate_proj.biases").ne == std::vector<uint64_t>{2, 64, 4});
    CHECK(tensor(e.folder, "model.layers.0.mlp.shared_experts.up_proj.weight").ne == std::vector<uint64_t>{8, 64});
    // Expert 2's words are the third quarter of the stacked tensor.
    std::vector<uint8_t> stacked = tensor_bytes(e.folder, "model.layers.0.mlp.switch_mlp.gate_proj.weight");
    std::vector<uint8_t> expert2 = tensor_bytes(e.prepared.model, "model.layers.0.mlp.experts.2.gate_proj.weight");
    CHECK(std::vector<uint8_t>(stacked.begin() + 2 * expert2.size(), stacked.begin() + 3 * expert2.size()) == expert2);
    nlohmann::json config = nlohmann::json::parse(read_whole_file(dir.file("out/config.json")));
    CHECK(config["quantization"] == nlohmann::json::parse(R"({"group_size":32,"bits":4,"mode":"affine"})"));
    CHECK(config["quantization_config"] == config["quantization"]);
    CHECK(config["model_type"] == "deepseek_v2");

    TempDir current;
    Exported c = export_model(kDemoStore, "tiny-moe:int4", current.file("out"), options_for(ExportFormat::mlx));
    CHECK(tensor(c.folder, "model.layers.0.mlp.switch_mlp.down_proj.weight").ne == std::vector<uint64_t>{8, 64, 4});
    CHECK(tensor(c.folder, "model.layers.0.mlp.switch_mlp.down_proj.scales").type.name == "F16");
}

TEST_CASE("store export mlx: mixed precision in config.json - a global-scale nvfp4 tensor dequantized", "[store_export]") {
    TempDir dir;
    Exported e = export_model(kDemoStore, "tiny-mlx:mixed", dir.file("out"), options_for(ExportFormat::mlx));
    CHECK(e.report.verification.failures == 0);
    nlohmann::json q = nlohmann::json::parse(read_whole_file(dir.file("out/config.json")))["quantization"];
    const std::string p = "model.layers.0.";
    // int8 g64 (k_proj, lm_head) is the most common; every other path is named with its own.
    CHECK(q["group_size"] == 64);
    CHECK(q["bits"] == 8);
    CHECK(q["mode"] == "affine");
    CHECK(q[p + "self_attn.q_proj"] == nlohmann::json::parse(R"({"group_size":64,"bits":4,"mode":"affine"})"));
    CHECK(q[p + "self_attn.v_proj"] == nlohmann::json::parse(R"({"group_size":32,"bits":4,"mode":"affine"})"));
    CHECK(q[p + "mlp.gate_proj"] == nlohmann::json::parse(R"({"group_size":16,"bits":4,"mode":"nvfp4"})"));
    CHECK(q[p + "mlp.up_proj"] == nlohmann::json::parse(R"({"group_size":32,"bits":4,"mode":"mxfp4"})"));
    CHECK(q[p + "mlp.down_proj"] == nlohmann::json::parse(R"({"group_size":32,"bits":8,"mode":"mxfp8"})"));
    CHECK(q[p + "self_attn.o_proj"] == false);
    CHECK_FALSE(q.contains("lm_head"));
    CHECK(tensor(e.folder, p + "self_attn.o_proj.weight").type.name == "BF16");
    CHECK(e.folder.find_tensor(p + "self_attn.o_proj.scales") == nullptr);
    CHECK(tensor(e.folder, p + "mlp.up_proj.scales").type.name == "U8");
    CHECK(e.folder.find_tensor(p + "mlp.up_proj.biases") == nullptr);
    CHECK(tensor_bytes(e.folder, p + "mlp.down_proj.weight") == tensor_bytes(e.prepared.model, p + "mlp.down_proj.weight"));
}

TEST_CASE("store export mlx and hf of a hand-computed int4 and nvfp4 tensor", "[store_export]") {
    TempDir dir;
    const std::string root = hand_store(dir);
    const std::string q = "model.layers.0.self_attn.q_proj", g = "model.layers.0.mlp.gate_proj";

    Exported mlx = export_model(root, "hand", dir.file("mlx"), options_for(ExportFormat::mlx));
    std::vector<std::string> names;
    for (const TensorInfo& t : mlx.folder.tensors) names.push_back(t.name + " " + t.type.name);
    CHECK(names ==
          std::vector<std::string>{q + ".weight U32", q + ".scales BF16", q + ".biases BF16", g + ".weight U32", g + ".scales U8"});
    CHECK(tensor(mlx.folder, q + ".weight").ne == std::vector<uint64_t>{4, 1});
    CHECK(tensor_bytes(mlx.folder, q + ".weight") == le32({0x76543210, 0xFEDCBA98, 0x01234567, 0x89ABCDEF}));
    CHECK(tensor_bytes(mlx.folder, q + ".scales") == std::vector<uint8_t>{0x00, 0x3F});
    CHECK(tensor_bytes(mlx.folder, q + ".biases") == std::vector<uint8_t>{0x80, 0xBF});
    CHECK(tensor_bytes(mlx.folder, g + ".weight") == le32({0x76543210, 0xFEDCBA98}));
    CHECK(tensor_bytes(mlx.folder, g + ".scales") == std::vector<uint8_t>{0x40});
    nlohmann::json config = nlohmann::json::parse(read_whole_file(dir.file("mlx/config.json")));
    CHECK(config == nlohmann::json::parse(R"({"model_type":"llama","torch_dtype":"float32",
        "quantization":{"group_size":32,"bits":4,"mode":"affine",
                        "model.layers.0.mlp.gate_proj":{"group_size":16,"bits":4,"mode":"nvfp4"}},
        "quantization_config":{"group_size":32,"bits":4,"mode":"affine",
                        "model.layers.0.mlp.gate_proj":{"group_size":16,"bits":4,"mode":"nvfp4"}}})"));

    // The same codes in hf (F32 from config.json): int4 w = q x 0.5 - 1 with q = 0..15, 15..0, 7..0, 8..15 ...
    Exported hf = export_model(root, "hand", dir.file("hf"), options_for(ExportFormat::hf));
    CHECK(hf.prepared.plan.hf.dtype == HfDtype::f32);
    std::vector<float> expected_q;
    for (uint32_t word : {0x76543210u, 0xFEDCBA98u, 0x01234567u, 0x89ABCDEFu})
        for (int j = 0; j < 8; ++j) expected_q.push_back(static_cast<float>((word >> (4 * j)) & 0xF) * 0.5f - 1.0f);
    CHECK(expected_q.front() == -1.0f);
    CHECK(expected_q[15] == 6.5f);
    CHECK(tensor_values(hf.folder, q + ".weight") == expected_q);
    // nvfp4 w = e2m1(code) x 2: codes 0..7 then 8..15 (the negatives).
    CHECK(tensor_values(hf.folder, g + ".weight") == std::vector<float>{0, 1, 2, 3, 4, 6, 8, 12, -0.0f, -1, -2, -3, -4, -6, -8, -12});
    CHECK(hf.report.verification.failures == 0);
}

TEST_CASE("mlens export --format mlx|hf on the demo store, with --json", "[store_export]") {
    TempDir dir;
    CliRun dry = run_mlens({"export", kDemoStore + "/tiny-moe:int4", "--dry-run"});
    INFO(dry.err);
    CHECK(dry.exit_status == 0);
    CHECK(dry.out.starts_with("model: tiny-moe:int4  format: hf  dtype: BF16\nwould write:\n"));
    CHECK(dry.out.find("model-00001-of-00001.safetensors") != std::string::npos);
    CHECK(dry.out.find("note: 12 expert tensors unpacked from stacked expert groups") != std::string::npos);

    CliRun json = run_mlens({"export", "tiny-mlx:mixed", dir.file("out"), "--store", kDemoStore, "--format", "mlx", "--json"});
    INFO(json.err);
    CHECK(json.exit_status == 0);
    nlohmann::json j = nlohmann::json::parse(json.out);
    CHECK(j["format"] == "mlx");
    CHECK(j["formats"] == nlohmann::json::parse(R"(["hf","mlx"])"));
    CHECK(j["verification"]["failures"] == 0);
    CHECK(fs::exists(dir.file("out/README.md")));

    CliRun bad = run_mlens({"export", "tiny-mlx:mixed", dir.file("out2"), "--store", kDemoStore, "--format", "mlx", "--dtype", "f16"});
    CHECK(bad.exit_status == 2);
    CHECK(bad.err.find("--dtype applies to --format hf only") != std::string::npos);
}

TEST_CASE("mlens store and show name the export formats and the exact files before anything is written", "[store_export]") {
    CliRun listing = run_mlens({"store", kDemoStore, "--json"});
    REQUIRE(listing.exit_status == 0);
    const nlohmann::json parsed_listing = nlohmann::json::parse(listing.out);
    for (const nlohmann::json& m : parsed_listing["models"])
        CHECK(m["export_formats"] ==
              (m["format"] == "gguf" ? nlohmann::json::parse(R"(["gguf"])") : nlohmann::json::parse(R"(["hf","mlx"])")));

    CliRun show = run_mlens({"show", "tiny-mlx:mixed", "--store", kDemoStore, "--json"});
    REQUIRE(show.exit_status == 0);
    nlohmann::json plans = nlohmann::json::parse(show.out)["export"];
    REQUIRE(plans.size() == 2);
    for (const nlohmann::json& plan : plans) {
        auto store = Store::open(kDemoStore);
        REQUIRE(store);
        auto prepared = prepare_store_export(*store, *parse_model_reference("tiny-mlx:mixed"),
                                             options_for(*parse_export_format(plan["format"].get<std::string>())));
        REQUIRE(prepared);
        REQUIRE(plan["files"].size() == prepared->plan.files.size());
        for (size_t i = 0; i < prepared->plan.files.size(); ++i) {
            CHECK(plan["files"][i]["name"] == prepared->plan.files[i].name);
            CHECK(plan["files"][i]["bytes"] == prepared->plan.files[i].bytes);
        }
        CHECK(plan["total_bytes"] == prepared->plan.total_bytes());
        CHECK(plan["error"].is_null());
    }
    CliRun text = run_mlens({"show", "tiny-llama:q4_0", "--store", kDemoStore});
    CHECK(text.out.find("export (what `mlens export tiny-llama:q4_0 OUT_DIR --format F` writes)\nFORMAT  FILE        BYTES\n"
                        "gguf    model.gguf  3085696\n") != std::string::npos);
}

TEST_CASE("mlens diff pairs a store model with its hf export, stacked experts with their per-expert names", "[store_export]") {
    TempDir dir;
    Exported e = export_model(kDemoStore, "tiny-moe:int4", dir.file("out"), options_for(ExportFormat::hf, HfDtype::f32));
    CliRun diff = run_mlens({"diff", kDemoStore + "/tiny-moe:int4", dir.file("out"), "--numeric", "--json"});
    INFO(diff.err);
    REQUIRE(diff.exit_status == 0);
    nlohmann::json d = nlohmann::json::parse(diff.out);
    CHECK(d["name_map"] == "per-expert names\xE2\x86\x92stacked experts");
    size_t paired = 0;
    for (const nlohmann::json& t : d["tensors"]) {
        for (const char* change : {"added", "removed", "values"})  // F32 holds every dequantized value
            CHECK(std::find(t["changes"].begin(), t["changes"].end(), change) == t["changes"].end());
        CHECK(t["error"]["max_abs"] == 0.0);
        ++paired;
    }
    CHECK(paired == 14);  // every tensor retyped to F32, the 12 experts renamed too
}

TEST_CASE("mlens export interrupted by SIGINT leaves neither OUT_DIR nor its scratch folder", "[store_export][cli]") {
    TempDir dir;
    const std::string root = dir.file("store");
    fs::create_directories(root);
    {
        // One BF16 tensor of 32M values (64 MiB): written as F32, then re-read, it takes a while.
        OllamaStoreBuilder b(root);
        const uint64_t values = 32ull << 20;
        SafetensorsBuilder blob;
        blob.tensor("model.embed_tokens.weight", "BF16", "[8192,4096]", std::vector<uint8_t>(values * 2, 0x3F));
        b.add_model("big",
                    {b.blob(kTensorMediaType, blob.bytes(), std::string("model.embed_tokens.weight")),
                     b.blob(kJsonMediaType, std::string(R"({"model_type":"llama"})"), std::string("config.json"))},
                    config_json("safetensors", "llama", ""));
    }
    fs::create_directories(dir.file("parent"));
    CliLimits limits;
    limits.seconds = 0.3;
    limits.stop_signal = SIGINT;
    CliRun run = run_mlens({"export", "big", dir.file("parent/out"), "--store", root, "--dtype", "f32"}, limits);
    INFO(run.err);
    const bool whole = fs::exists(dir.file("parent/out/model-00001-of-00001.safetensors")) &&
        fs::file_size(dir.file("parent/out/model-00001-of-00001.safetensors")) > (128ull << 20);
    if (run.exit_status == 0) {
        // Finished before the signal: then it is all there.
        CHECK(whole);
    } else if (run.signal == SIGINT) {
        // Ended by the signal itself, outside the export's job: before it began (nothing written)
        // or after it had finished (everything in place), as the process was ending (a sanitizer's
        // exit takes a while) - never with a part of it.
        CHECK((whole || fs::is_empty(dir.file("parent"))));
    } else {
        CHECK(run.exit_status == 1);
        CHECK(run.err.find("E_CANCELLED") != std::string::npos);
        CHECK(fs::is_empty(dir.file("parent")));
    }
}
