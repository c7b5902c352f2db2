// Logical tensors (logical_tensors.h) and the summary computed from them: a quantized tensor
// stored as packed weights, scale, bias and global scale is one tensor with its logical shape,
// every byte it is stored in and its real bits per weight; expert groups are named on their
// members; the architecture of a safetensors model comes from its config.json.
#include <catch2/catch.hpp>

#include <string>

#include "build_paths.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/model/logical_tensors.h"
#include "mlens/model/summary.h"
#include "mlens/ollama/tensor_blobs.h"
#include "mlens/open/target.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const std::string kStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";
const std::string kT = "model.layers.0.self_attn.q_proj.weight";

std::vector<uint8_t> zeros(size_t n) { return std::vector<uint8_t>(n, 0); }

// A safetensors file built in memory, read without errors and described as an Ollama tensor blob.
Model read_blob(const SafetensorsBuilder& sb) {
    Model m = read_safetensors(memory_source(sb.bytes()));
    REQUIRE(m.error_count() == 0);
    describe_tensor_blobs(m, {""});
    return m;
}

Model opened(const std::string& path) {
    auto m = open_model(path);
    INFO(path);
    REQUIRE(m.ok());
    return std::move(m).value();
}

const LogicalTensor& logical(const Model& m, const std::vector<LogicalTensor>& ts, const std::string& name) {
    const TensorInfo* t = m.find_tensor(name);
    INFO(name);
    REQUIRE(t);
    const LogicalTensor* lt = find_logical_tensor(ts, static_cast<size_t>(t - m.tensors.data()));
    REQUIRE(lt);
    return *lt;
}

std::vector<std::string> roles(const LogicalTensor& t) {
    std::vector<std::string> out;
    for (const StoredPart& p : t.parts) out.push_back(p.role);
    return out;
}

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// A safetensors folder: one F32 tensor and this config.json.
std::string folder_with_config(const TempDir& dir, const std::string& config) {
    SafetensorsBuilder sb;
    sb.tensor("model.norm.weight", "F32", "[4]", zeros(16));
    write_whole_file(dir.file("model.safetensors"), sb.bytes());
    write_whole_file(dir.file("config.json"), bytes_of(config));
    return dir.path();
}

}  // namespace

TEST_CASE("a packed int4 tensor with its scale and bias is one logical tensor", "[logical]") {
    // 4 rows of 16 words of eight 4-bit values, groups of 32: 16 BF16 scales and biases.
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "int4").metadata("group_size", "32");
    sb.tensor("model.embed_tokens.weight", "BF16", "[8,16]", zeros(256));
    sb.tensor(kT, "U32", "[4,16]", zeros(256));
    sb.tensor(kT + ".scale", "BF16", "[4,4]", zeros(32));
    sb.tensor(kT + ".bias", "BF16", "[4,4]", zeros(32));
    const Model m = read_blob(sb);
    const std::vector<LogicalTensor> ts = logical_tensors(m);
    REQUIRE(ts.size() == 2);

    const LogicalTensor& q = logical(m, ts, kT);
    CHECK(q.type == "int4 g32");
    CHECK(q.ne == std::vector<uint64_t>{128, 4});
    CHECK(q.elements == 512);
    // 256 packed bytes plus 32 + 32 of scales and biases: 320 bytes, 5 bits per weight.
    CHECK(q.bytes == std::optional<uint64_t>(320));
    CHECK(q.bits_per_weight() == 5.0);
    CHECK(q.folded());
    CHECK(roles(q) == std::vector<std::string>{"packed", "scale", "bias"});
    CHECK(stored_as_text(m, q) == "U32 [16, 4] + scale BF16 [4, 4] + bias BF16 [4, 4]");
    CHECK(!q.group);
    CHECK(expert_text(m, q).empty());

    const LogicalTensor& e = logical(m, ts, "model.embed_tokens.weight");
    CHECK(e.type == "BF16");
    CHECK(e.ne == std::vector<uint64_t>{16, 8});
    CHECK(e.elements == 128);
    CHECK(e.bytes == std::optional<uint64_t>(256));
    CHECK(e.bits_per_weight() == 16.0);
    CHECK(!e.folded());
    CHECK(roles(e) == std::vector<std::string>{"data"});

    // Companions are no tensors of their own.
    CHECK(find_logical_tensor(ts, m.find_tensor(kT + ".scale") - m.tensors.data()) == nullptr);
    CHECK(find_logical_tensor(ts, m.tensors.size()) == nullptr);

    const ModelSummary s = summarize(m);
    CHECK(s.tensor_count == 2);
    CHECK(s.stored_tensor_count == 4);
    CHECK(s.parameters == 640);
    CHECK(s.tensor_bytes == 576);
    CHECK(s.bits_per_weight == 576.0 * 8 / 640);
    const std::vector<LayerSummary> layers = summarize_layers(m);
    REQUIRE(layers.size() == 2);
    CHECK(layers[0].layer == std::optional<uint32_t>(0));
    CHECK(layers[0].tensors.size() == 1);
    CHECK(layers[0].parameters == 512);
    CHECK(layers[0].bytes == 320);
    CHECK(layers[0].types == std::vector<std::string>{"int4 g32"});
    CHECK(layers[1].types == std::vector<std::string>{"BF16"});
}

TEST_CASE("an nvfp4 tensor folds its U8 scales and its global scale", "[logical]") {
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "nvfp4");
    sb.tensor(kT, "U32", "[4,2]", zeros(32));
    sb.tensor(kT + ".scale", "U8", "[4,1]", zeros(4));
    sb.tensor(kT + ".global_scale", "F32", "[]", zeros(4));
    const Model m = read_blob(sb);
    const std::vector<LogicalTensor> ts = logical_tensors(m);
    REQUIRE(ts.size() == 1);
    const LogicalTensor& q = ts[0];
    CHECK(q.type == "nvfp4 g16");
    CHECK(q.ne == std::vector<uint64_t>{16, 4});
    CHECK(q.elements == 64);
    CHECK(q.bytes == std::optional<uint64_t>(40));
    CHECK(q.bits_per_weight() == 5.0);
    CHECK(roles(q) == std::vector<std::string>{"packed", "scale", "global_scale"});
    CHECK(stored_as_text(m, q) == "U32 [2, 4] + scale U8 [1, 4] + global scale F32 []");
}

TEST_CASE("a GGUF file's logical tensors are its tensors", "[logical]") {
    Model m = opened(std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf");
    const std::vector<LogicalTensor> ts = logical_tensors(m);
    REQUIRE(ts.size() == m.tensors.size());
    for (size_t i = 0; i < ts.size(); ++i) {
        const TensorInfo& t = m.tensors[i];
        CHECK(ts[i].index == i);
        CHECK(ts[i].type == t.type.name);
        CHECK(ts[i].ne == t.ne);
        CHECK(ts[i].elements == t.n_elements);
        CHECK(ts[i].bytes == t.n_bytes);
        CHECK(ts[i].bits_per_weight() == t.bits_per_weight());
        CHECK(roles(ts[i]) == std::vector<std::string>{"data"});
    }
    const ModelSummary s = summarize(m);
    CHECK(s.tensor_count == 21);
    CHECK(s.stored_tensor_count == 21);
    CHECK(s.architecture == "llama");
    CHECK(s.architecture_source == "general.architecture");
}

TEST_CASE("the demo store's mixed-precision model in logical form", "[logical][ollama]") {
    Model m = opened(kStore + "/tiny-mlx:mixed");
    const std::vector<LogicalTensor> ts = logical_tensors(m);
    REQUIRE(ts.size() == 12);
    const std::string p = "model.layers.0.";
    struct Row {
        std::string name, type;
        std::vector<uint64_t> ne;
        uint64_t bytes;
    };
    // Packed bytes + scales (+ biases, + a 4-byte global scale): int4 g64 of 64 x 64 is 2048 +
    // 128 + 128; int8 g64 of 32 x 64 is 2048 + 64 + 64; nvfp4 keeps one U8 scale per 16 values.
    const Row rows[] = {
        {"model.embed_tokens.weight", "BF16", {64, 32}, 4096},
        {p + "input_layernorm.weight", "BF16", {64}, 128},
        {p + "self_attn.q_proj.weight", "int4 g64", {64, 64}, 2304},
        {p + "self_attn.k_proj.weight", "int8 g64", {64, 32}, 2176},
        {p + "self_attn.v_proj.weight", "int4 g32", {64, 32}, 1024 + 128 + 128},
        {p + "self_attn.o_proj.weight", "nvfp4 g16", {64, 64}, 2048 + 256 + 4},
        {p + "post_attention_layernorm.weight", "BF16", {64}, 128},
        {p + "mlp.gate_proj.weight", "nvfp4 g16", {64, 128}, 4096 + 512},
        {p + "mlp.up_proj.weight", "mxfp4 g32", {64, 128}, 4096 + 256},
        {p + "mlp.down_proj.weight", "mxfp8 g32", {128, 64}, 8192 + 256},
        {"model.norm.weight", "BF16", {64}, 128},
        {"lm_head.weight", "int8 g64", {64, 32}, 2176},
    };
    uint64_t bytes = 0;
    for (size_t i = 0; i < ts.size(); ++i) {
        INFO(rows[i].name);
        CHECK(m.tensors[ts[i].index].name == rows[i].name);
        CHECK(ts[i].type == rows[i].type);
        CHECK(ts[i].ne == rows[i].ne);
        CHECK(ts[i].bytes == std::optional<uint64_t>(rows[i].bytes));
        bytes += rows[i].bytes;
    }
    const ModelSummary s = summarize(m, ts);
    CHECK(s.format == Format::safetensors);
    CHECK(s.architecture == "qwen3");
    CHECK(s.architecture_source == "config.json model_type");
    CHECK(s.tensor_count == 12);
    // Four affine tensors with a scale and a bias, three fp ones with a scale, o_proj with a scale
    // and a global scale.
    CHECK(s.stored_tensor_count == 12 + 4 * 2 + 3 + 2);
    CHECK(s.parameters == 41152);
    CHECK(s.tensor_bytes == bytes);
    CHECK(s.bits_per_weight == static_cast<double>(bytes) * 8 / 41152);
}

TEST_CASE("expert group members say which experts they hold", "[logical][ollama]") {
    {
        Model m = opened(kStore + "/tiny-moe:int4");
        const std::vector<LogicalTensor> ts = logical_tensors(m);
        const LogicalTensor& gate = logical(m, ts, "model.layers.0.mlp.experts.gate_proj.weight");
        REQUIRE(gate.group);
        CHECK(m.groups[*gate.group].name == "model.layers.0.mlp.experts");
        CHECK(!gate.expert);
        CHECK(gate.ne == std::vector<uint64_t>{64, 64, 4});
        CHECK(expert_text(m, gate) == "4 experts stacked");
        CHECK(summarize(m).architecture == "qwen3_moe");
    }
    Model m = opened(kStore + "/tiny-moe-legacy:per-expert");
    const std::vector<LogicalTensor> ts = logical_tensors(m);
    const LogicalTensor& up = logical(m, ts, "model.layers.0.mlp.experts.2.up_proj.weight");
    REQUIRE(up.group);
    CHECK(up.expert == std::optional<uint64_t>(2));
    CHECK(expert_text(m, up) == "expert 2 of 4");
    CHECK(up.type == "int4 g32");
    const LogicalTensor& shared = logical(m, ts, "model.layers.0.mlp.shared_experts.down_proj.weight");
    REQUIRE(shared.group);
    CHECK(m.groups[*shared.group].name == "model.layers.0.mlp.shared_experts");
    CHECK(expert_text(m, shared) == "1 expert");
    // 4 experts x 3 projections, 3 shared projections, q_proj and the embedding.
    CHECK(ts.size() == 12 + 3 + 2);
}

TEST_CASE("a safetensors model's architecture comes from its config.json", "[logical]") {
    struct Case {
        std::string config, architecture, source;
    };
    const Case cases[] = {
        {R"({"architectures":["LlamaForCausalLM"],"model_type":"llama"})", "llama", "config.json model_type"},
        {R"({"architectures":["Gemma3ForConditionalGeneration"],"text_config":{"model_type":"gemma3_text"}})", "gemma3_text",
         "config.json text_config.model_type"},
        {R"({"architectures":["MysteryForCausalLM"]})", "MysteryForCausalLM", "config.json architectures"},
        {R"({"model_type":7,"architectures":[]})", "", ""},
        {"not json", "", ""},
    };
    for (const Case& c : cases) {
        INFO(c.config);
        TempDir dir;
        const ModelSummary s = summarize(opened(folder_with_config(dir, c.config)));
        CHECK(s.architecture == c.architecture);
        CHECK(s.architecture_source == c.source);
    }
}

TEST_CASE("an Ollama tensor blob opened by its path lists logical tensors", "[logical]") {
    TempDir dir;
    SafetensorsBuilder blob;
    blob.metadata("quant_type", "int4").metadata("group_size", "32");
    blob.tensor(kT, "U32", "[4,16]", zeros(256));
    blob.tensor(kT + ".scale", "BF16", "[4,4]", zeros(32));
    blob.tensor(kT + ".bias", "BF16", "[4,4]", zeros(32));
    write_whole_file(dir.file("sha256-blob"), blob.bytes());
    Model m = opened(dir.file("sha256-blob"));
    CHECK(m.diagnostics.empty());
    const std::vector<LogicalTensor> ts = logical_tensors(m);
    REQUIRE(ts.size() == 1);
    CHECK(ts[0].type == "int4 g32");
    CHECK(ts[0].elements == 512);
    CHECK(summarize(m).bits_per_weight == 5.0);

    // A U32 tensor without a scale beside it is an ordinary tensor.
    SafetensorsBuilder plain;
    plain.tensor("position_ids", "U32", "[4,16]", zeros(256));
    write_whole_file(dir.file("plain.safetensors"), plain.bytes());
    Model p = opened(dir.file("plain.safetensors"));
    CHECK(p.diagnostics.empty());
    REQUIRE(logical_tensors(p).size() == 1);
    CHECK(logical_tensors(p)[0].type == "U32");
    CHECK(logical_tensors(p)[0].bits_per_weight() == 32.0);
}
