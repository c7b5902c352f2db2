// Safetensors tensor blobs (ollama-store.md §4): quantized tensors combined from their entries
// for every quant type, aliases, per-tensor and blob metadata, shape inference, and expert groups
// in every layout Ollama has written, read from single blobs and from whole store models.
#include <catch2/catch.hpp>

#include <algorithm>

#include "diagnostic_checks.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/model/summary.h"
#include "mlens/ollama/store_model.h"
#include "mlens/ollama/tensor_blobs.h"
#include "ollama_store_builder.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

uint64_t dtype_bytes(const std::string& dtype) {
    if (dtype == "U8") return 1;
    if (dtype == "BF16" || dtype == "F16") return 2;
    return 4;
}

// Adds a zero-filled tensor of this dtype and (row-major) shape.
void add(SafetensorsBuilder& sb, const std::string& name, const std::string& dtype, const std::vector<uint64_t>& shape) {
    uint64_t n = dtype_bytes(dtype);
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        n *= shape[i];
        text += (i ? "," : "") + std::to_string(shape[i]);
    }
    sb.tensor(name, dtype, text + "]", std::vector<uint8_t>(n, 0));
}

// T (U32 packed), T.scale and, unless scale_dtype is U8, T.bias.
void add_quantized(SafetensorsBuilder& sb, const std::string& t, std::vector<uint64_t> packed, uint64_t scale_cols,
                   const std::string& scale_dtype = "BF16", bool bias = true) {
    add(sb, t, "U32", packed);
    packed.back() = scale_cols;
    add(sb, t + ".scale", scale_dtype, packed);
    if (bias) add(sb, t + ".bias", scale_dtype, packed);
}

// One blob read alone, described with its layer name.
Model blob_model(const SafetensorsBuilder& sb, const std::string& blob_name = "", std::optional<uint32_t> hint = std::nullopt) {
    Model m = read_safetensors(memory_source(sb.bytes()));
    INFO(describe(m));
    REQUIRE(m.error_count() == 0);
    describe_tensor_blobs(m, {blob_name}, hint);
    return m;
}

size_t index_of(const Model& m, const std::string& name) { return static_cast<size_t>(&tensor(m, name) - m.tensors.data()); }

bool has_warning(const Model& m, const std::string& code) {
    return std::any_of(m.diagnostics.begin(), m.diagnostics.end(),
                       [&](const Diagnostic& d) { return std::string(code_name(d.code)) == code; });
}

const TensorGroup* group(const Model& m, const std::string& name) {
    for (const TensorGroup& g : m.groups)
        if (g.name == name) return &g;
    return nullptr;
}

const std::string kT = "model.layers.0.self_attn.q_proj.weight";

}  // namespace

TEST_CASE("every quant type's blob metadata gives its logical tensor", "[ollama]") {
    struct Case {
        const char* type;
        std::vector<uint64_t> packed;
        uint64_t scale_cols;
        const char* scale_dtype;
        bool bias;
        const char* mode;
        uint32_t bits;
        uint64_t group;
    };
    const Case cases[] = {
        {"int4", {4, 16}, 2, "BF16", true, "affine", 4, 64}, {"int8", {4, 32}, 2, "BF16", true, "affine", 8, 64},
        {"nvfp4", {4, 16}, 8, "U8", false, "nvfp4", 4, 16},  {"mxfp4", {4, 16}, 4, "U8", false, "mxfp4", 4, 32},
        {"mxfp8", {4, 32}, 4, "U8", false, "mxfp8", 8, 32},
    };
    for (const Case& c : cases) {
        INFO(c.type);
        SafetensorsBuilder sb;
        sb.metadata("quant_type", c.type);
        add_quantized(sb, kT, c.packed, c.scale_cols, c.scale_dtype, c.bias);
        add(sb, "model.norm.weight", "BF16", {128});
        Model m = blob_model(sb, kT);
        INFO(describe(m));
        CHECK(m.diagnostics.empty());
        const TensorInfo& t = tensor(m, kT);
        REQUIRE(t.quant);
        const QuantLayout& q = *t.quant;
        CHECK(q.type == c.type);
        CHECK(q.mode == c.mode);
        CHECK(q.bits == c.bits);
        CHECK(q.group_size == c.group);
        CHECK(q.declared == c.type);
        CHECK(q.logical_ne == std::vector<uint64_t>{128, 4});
        CHECK(q.logical_elements == 512);
        CHECK(q.origin == "type: blob metadata; group size: table default");
        CHECK(q.scale == index_of(m, kT + ".scale"));
        CHECK(tensor(m, kT + ".scale").part_of == index_of(m, kT));
        if (c.bias) {
            CHECK(q.bias == index_of(m, kT + ".bias"));
            CHECK(tensor(m, kT + ".bias").part_of == index_of(m, kT));
        } else {
            CHECK(!q.bias);
        }
        CHECK(!q.global_scale);
        CHECK(t.ne == std::vector<uint64_t>{c.packed[1], 4});  // the stored entry stays as stored
        CHECK(!tensor(m, "model.norm.weight").quant);
        CHECK(!tensor(m, "model.norm.weight").part_of);
        CHECK(m.tensors.size() == (c.bias ? 4u : 3u));
        CHECK(m.groups.empty());
    }
}

TEST_CASE("quant_type aliases are normalized and kept as declared", "[ollama]") {
    const std::pair<const char*, const char*> aliases[] = {{"Q4", "int4"},  {"INT4", "int4"}, {"fp4", "int4"},    {"q8", "int8"},
                                                           {"FP8", "int8"}, {"Int8", "int8"}, {"NVFP4", "nvfp4"}, {"MxFp8", "mxfp8"}};
    for (const auto& [declared, type] : aliases) {
        INFO(declared);
        CHECK(normalize_quant_type(declared) == std::string(type));
        SafetensorsBuilder sb;
        sb.metadata("quant_type", declared).metadata("group_size", "64");
        bool affine = std::string(type).starts_with("int");
        add_quantized(sb, kT, {4, 16}, 2, affine ? "BF16" : "U8", affine);
        Model m = blob_model(sb, kT);
        REQUIRE(tensor(m, kT).quant);
        CHECK(tensor(m, kT).quant->type == type);
        CHECK(tensor(m, kT).quant->declared == declared);
    }
    CHECK(!normalize_quant_type("Q3"));
    CHECK(!normalize_quant_type(""));
    CHECK(quant_params("int4")->group_size == 64);
    CHECK(!quant_params("Q4"));
}

TEST_CASE("per-tensor metadata wins over blob metadata in mixed-precision blobs", "[ollama]") {
    const std::string a = "model.layers.0.mlp.gate_proj.weight", b = "model.layers.0.mlp.down_proj.weight";
    SafetensorsBuilder sb;
    sb.metadata(a + ".quant_type", "int4").metadata(b + ".quant_type", "int8").metadata(b + ".group_size", "32");
    add_quantized(sb, a, {4, 16}, 2);
    add_quantized(sb, b, {4, 32}, 4);
    Model m = blob_model(sb, "model.layers.0.mlp");
    INFO(describe(m));
    CHECK(m.diagnostics.empty());
    const QuantLayout& qa = *tensor(m, a).quant;
    CHECK(qa.type == "int4");
    CHECK(qa.group_size == 64);
    CHECK(qa.origin == "type: tensor metadata; group size: table default");
    const QuantLayout& qb = *tensor(m, b).quant;
    CHECK(qb.type == "int8");
    CHECK(qb.group_size == 32);
    CHECK(qb.origin == "type: tensor metadata; group size: tensor metadata");
    CHECK(qb.logical_ne == std::vector<uint64_t>{128, 4});
}

TEST_CASE("int4 with the old group size 32 from blob metadata", "[ollama]") {
    SafetensorsBuilder sb;
    sb.metadata("group_size", "32").metadata("quant_type", "int4");
    add_quantized(sb, kT, {4, 16}, 4);
    Model m = blob_model(sb, kT);
    INFO(describe(m));
    CHECK(m.diagnostics.empty());
    CHECK(tensor(m, kT).quant->group_size == 32);
    CHECK(tensor(m, kT).quant->origin == "type: blob metadata; group size: blob metadata");
    // 4 rows of 16 words of eight 4-bit values: 512 weights, stored in 256 packed bytes plus a
    // BF16 scale and bias for each of the 16 groups (64 bytes): 5 bits per weight.
    const ModelSummary summary = summarize(m);
    CHECK(summary.parameters == 512);
    CHECK(summary.bits_per_weight == 5.0);
    CHECK(summary.tensor_count == 1);
}

TEST_CASE("without metadata the type is inferred from the shapes", "[ollama]") {
    struct Case {
        std::vector<uint64_t> packed;
        uint64_t scale_cols;
        const char* scale_dtype;
        std::optional<uint32_t> hint;
        const char* type;
        uint64_t group;
        const char* warning;
    };
    const Case cases[] = {
        {{4, 16}, 4, "BF16", std::nullopt, "int4", 32, nullptr},  // r4 = 32
        {{4, 32}, 2, "BF16", std::nullopt, "int8", 64, nullptr},  // r8 = 64
        {{4, 16}, 2, "BF16", std::nullopt, "int4", 64, "W_QUANT_AMBIGUOUS"},  // r4 = 64, r8 = 32
        {{4, 16}, 2, "BF16", 8u, "int8", 32, nullptr},
        {{4, 16}, 2, "BF16", 4u, "int4", 64, nullptr},
        {{4, 16}, 8, "BF16", std::nullopt, "int4", 16, nullptr},  // r4 = 16 alone
        {{4, 64}, 2, "BF16", std::nullopt, "int8", 128, nullptr},  // r8 = 128 alone
        {{4, 16}, 8, "U8", std::nullopt, "nvfp4", 16, nullptr},
        {{4, 16}, 4, "U8", std::nullopt, "mxfp4", 32, nullptr},
        {{4, 32}, 4, "U8", std::nullopt, "mxfp8", 32, nullptr},
    };
    for (const Case& c : cases) {
        INFO(c.type << " packed cols " << c.packed[1] << " scale cols " << c.scale_cols << " " << c.scale_dtype);
        SafetensorsBuilder sb;
        add_quantized(sb, kT, c.packed, c.scale_cols, c.scale_dtype, std::string(c.scale_dtype) != "U8");
        Model m = blob_model(sb, kT, c.hint);
        INFO(describe(m));
        REQUIRE(tensor(m, kT).quant);
        const QuantLayout& q = *tensor(m, kT).quant;
        CHECK(q.type == c.type);
        CHECK(q.group_size == c.group);
        CHECK(q.declared.empty());
        CHECK(q.origin == "type: inferred from shapes; group size: inferred from shapes");
        CHECK(has_warning(m, "W_QUANT_AMBIGUOUS") == (c.warning != nullptr));
        CHECK(!has_warning(m, "W_QUANT_SHAPE_MISMATCH"));
    }
    SECTION("undecidable shapes") {
        SafetensorsBuilder sb;
        add_quantized(sb, kT, {4, 3}, 2);
        Model m = blob_model(sb, kT);
        REQUIRE(tensor(m, kT).quant);
        CHECK(tensor(m, kT).quant->type == "unknown");
        CHECK(tensor(m, kT).quant->logical_ne.empty());
        CHECK(has_warning(m, "W_QUANT_UNKNOWN"));
        CHECK(tensor(m, kT + ".scale").part_of == index_of(m, kT));
    }
}

TEST_CASE("prequantized nvfp4 with a global scale and no group_size", "[ollama]") {
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "nvfp4");
    add_quantized(sb, kT, {4, 16}, 8, "U8", false);
    add(sb, kT + ".global_scale", "F32", {});
    Model m = blob_model(sb, kT);
    INFO(describe(m));
    CHECK(m.diagnostics.empty());
    const QuantLayout& q = *tensor(m, kT).quant;
    CHECK(q.type == "nvfp4");
    CHECK(q.group_size == 16);
    CHECK(q.global_scale == index_of(m, kT + ".global_scale"));
    CHECK(tensor(m, kT + ".global_scale").part_of == index_of(m, kT));
}

TEST_CASE("odd quantized tensors keep opening, with warnings", "[ollama]") {
    SECTION("an unknown type takes Ollama's fallback") {
        SafetensorsBuilder sb;
        sb.metadata("quant_type", "Q3");
        add_quantized(sb, kT, {4, 16}, 2);
        Model m = blob_model(sb, kT);
        const QuantLayout& q = *tensor(m, kT).quant;
        CHECK(q.type == "Q3");
        CHECK(q.mode == "affine");
        CHECK(q.bits == 8);
        CHECK(q.group_size == 32);
        CHECK(has_warning(m, "W_UNKNOWN_QUANT_TYPE"));
    }
    SECTION("affine without its bias") {
        SafetensorsBuilder sb;
        sb.metadata("quant_type", "int4");
        add_quantized(sb, kT, {4, 16}, 2, "BF16", false);
        Model m = blob_model(sb, kT);
        CHECK(has_warning(m, "W_QUANT_MISSING_BIAS"));
        CHECK(!has_warning(m, "W_QUANT_SHAPE_MISMATCH"));
    }
    SECTION("a scale that does not fit the group size") {
        SafetensorsBuilder sb;
        sb.metadata("quant_type", "int4");
        add_quantized(sb, kT, {4, 16}, 3);
        Model m = blob_model(sb, kT);
        CHECK(has_warning(m, "W_QUANT_SHAPE_MISMATCH"));
        CHECK(tensor(m, kT).quant->logical_ne == std::vector<uint64_t>{128, 4});
    }
    SECTION("a group_size that is not a number") {
        SafetensorsBuilder sb;
        sb.metadata("quant_type", "int4").metadata("group_size", "6x4");
        add_quantized(sb, kT, {4, 16}, 2);
        Model m = blob_model(sb, kT);
        CHECK(has_warning(m, "W_BAD_GROUP_SIZE"));
        CHECK(tensor(m, kT).quant->group_size == 64);
        CHECK(tensor(m, kT).quant->origin == "type: blob metadata; group size: table default");
    }
}

TEST_CASE("scale and bias names that are not quantization companions stay alone", "[ollama]") {
    SafetensorsBuilder sb;
    add(sb, "model.layers.0.router.scale", "BF16", {8});  // gemma4: a real parameter
    add(sb, "model.layers.0.mlp.gate_proj.bias", "BF16", {8});  // a real linear bias
    add(sb, "model.layers.0.mlp.gate_proj.weight", "BF16", {8, 8});
    add(sb, "model.layers.0.mlp.gate_proj.weight.scale", "BF16", {8, 1});  // base not packed U32
    Model m = blob_model(sb, "x");
    for (const TensorInfo& t : m.tensors) {
        INFO(t.name);
        CHECK(!t.quant);
        CHECK(!t.part_of);
    }
}

TEST_CASE("expert group names follow Ollama's prefix rule", "[ollama]") {
    const std::vector<std::pair<std::string, std::string>> named = {
        {"model.layers.1.mlp.experts.0.gate_proj.weight", "model.layers.1.mlp.experts"},
        {"model.layers.1.mlp.shared_experts.gate_proj.weight", "model.layers.1.mlp.shared_experts"},
        {"language_model.model.layers.3.mlp.switch_mlp.up_proj.weight", "language_model.model.layers.3.mlp.switch_mlp"},
        {"model.language_model.layers.0.moe.experts.2.w1.weight", "model.language_model.layers.0.moe.experts"},
        {"backbone.layers.2.mixer.experts.0.up_proj.weight", "backbone.layers.2.mixer.experts"},
        {"model.language_model.backbone.layers.5.mixer.shared_experts.down_proj.weight",
         "model.language_model.backbone.layers.5.mixer.shared_experts"},
        {"mtp.layers.0.mlp.experts.1.down_proj.weight", "mtp.layers.0.mlp.experts"},
        {"layers.7.mlp.experts.0.up_proj.weight", "layers.7.mlp.experts"},
        {"draft.model.layers.0.mlp.experts.0.up_proj.weight", "draft.model.layers.0.mlp.experts"},
    };
    const std::vector<std::string> ungrouped = {"model.layers.x.mlp.experts.0.up_proj.weight", "foo.layers.1.mlp.experts.0.up_proj.weight",
                                                "model.layers.1.mlp.experts.0.up_proj.bias",   "model.layers.1.mlp.gate.weight",
                                                "model.layers.1.self_attn.experts.0.weight",   "model.layers.1.mlp.experts.weight"};
    SafetensorsBuilder sb;
    for (const auto& [name, g] : named) add(sb, name, "BF16", {2, 2});
    for (const std::string& name : ungrouped) add(sb, name, "BF16", {2, 2});
    Model m = blob_model(sb);
    CHECK(m.groups.size() == named.size());
    for (const auto& [name, g] : named) {
        INFO(name);
        const TensorGroup* found = group(m, g);
        REQUIRE(found);
        CHECK(found->kind == "experts");
        REQUIRE(found->members.size() == 1);
        CHECK(m.tensors[found->members[0]].name == name);
    }
}

namespace {

// A safetensors model in a store: config blob, tensor blobs, config.json.
struct TensorStore {
    TempDir dir;
    OllamaStoreBuilder b{dir.path()};
    std::vector<LayerSpec> layers;
    void blob(const std::string& name, const SafetensorsBuilder& sb) { layers.push_back(b.blob(kTensorMediaType, sb.bytes(), name)); }
    Model open(const std::string& config_json_text = "{\"architectures\":[\"X\"],\"quantization\":{\"group_size\":64,\"bits\":4}}") {
        std::vector<LayerSpec> all = layers;
        all.push_back(b.blob(kJsonMediaType, config_json_text, std::string("config.json")));
        b.add_model("st", all,
                    "{\"model_format\":\"safetensors\",\"file_type\":\"int4\",\"capabilities\":[\"completion\"],\"requires\":\"0.19.0\"}");
        auto store = Store::open(b.root());
        REQUIRE(store);
        auto model = open_store_model(*store, *parse_model_reference("st"));
        REQUIRE(model);
        INFO(describe(*model));
        CHECK(model->error_count() == 0);
        return std::move(*model);
    }
};

const std::vector<std::string> kProjections = {"gate_proj", "up_proj", "down_proj"};

}  // namespace

TEST_CASE("experts, 2026-02 layout: per-expert tensors in one group blob, __metadata__ null", "[ollama]") {
    std::string header = "{\"__metadata__\":null";
    std::vector<uint8_t> data;
    auto entry = [&](const std::string& name, const std::string& dtype, const std::string& shape, size_t bytes) {
        header += "," + st_entry(name, dtype, shape, data.size(), data.size() + bytes);
        data.resize(data.size() + bytes);
    };
    for (int e = 0; e < 4; ++e)
        for (const std::string& p : kProjections) {
            std::string t = "model.layers.1.mlp.experts." + std::to_string(e) + "." + p + ".weight";
            entry(t, "U32", "[8,8]", 256);
            entry(t + ".scale", "BF16", "[8,2]", 32);
            entry(t + ".bias", "BF16", "[8,2]", 32);
        }
    header += "}";
    TensorStore s;
    s.layers.push_back(s.b.blob(kTensorMediaType, safetensors_bytes(header, data), std::string("model.layers.1.mlp.experts")));
    Model m = s.open();
    REQUIRE(m.groups.size() == 1);
    const TensorGroup& g = m.groups[0];
    CHECK(g.name == "model.layers.1.mlp.experts");
    CHECK(g.kind == "experts");
    CHECK(g.count == 4);
    CHECK(g.parts == kProjections);
    CHECK(g.members.size() == 12);
    CHECK(g.layout == "per-expert tensors packed in one group blob (2026-02 to 2026-03 layout)");
    const TensorInfo& t = tensor(m, "model.layers.1.mlp.experts.3.down_proj.weight");
    REQUIRE(t.quant);
    CHECK(t.quant->type == "int4");
    CHECK(t.quant->group_size == 32);
    CHECK(t.quant->logical_ne == std::vector<uint64_t>{64, 8});
    CHECK(m.tensors.size() == 36);
}

TEST_CASE("experts, 2026-03 layout: switch_mlp stacked into a blob named ...mlp.experts", "[ollama]") {
    TensorStore s;
    SafetensorsBuilder sb;
    for (const std::string& p : kProjections) {
        std::string t = "model.layers.1.mlp.switch_mlp." + p + ".weight";
        sb.metadata(t + ".quant_type", "int4").metadata(t + ".group_size", "32");
        add_quantized(sb, t, {4, 8, 8}, 2);
    }
    s.blob("model.layers.1.mlp.experts", sb);
    Model m = s.open();
    REQUIRE(m.groups.size() == 1);
    const TensorGroup& g = m.groups[0];
    CHECK(g.name == "model.layers.1.mlp.switch_mlp");
    CHECK(g.count == 4);
    CHECK(g.parts == kProjections);
    CHECK(g.members.size() == 3);
    CHECK(g.layout == "stacked switch_mlp tensors in a blob named ...mlp.experts (2026-03 to 2026-07 layout)");
    const QuantLayout& q = *tensor(m, "model.layers.1.mlp.switch_mlp.up_proj.weight").quant;
    CHECK(q.logical_ne == std::vector<uint64_t>{64, 8, 4});
    CHECK(q.origin == "type: tensor metadata; group size: tensor metadata");
}

TEST_CASE("experts, current layout: stacked, every projection in one group blob", "[ollama]") {
    TensorStore s;
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "int4").metadata("group_size", "64");
    for (const std::string& p : kProjections) {
        std::string t = "model.layers.2.mlp.experts." + p + ".weight";
        sb.metadata(t + ".quant_type", "int4").metadata(t + ".group_size", "64");
        add_quantized(sb, t, {128, 16, 16}, 2);
    }
    s.blob("model.layers.2.mlp.experts", sb);
    Model m = s.open();
    REQUIRE(m.groups.size() == 1);
    const TensorGroup& g = m.groups[0];
    CHECK(g.name == "model.layers.2.mlp.experts");
    CHECK(g.count == 128);
    CHECK(g.parts == kProjections);
    CHECK(g.layout == "stacked, every projection in one group blob (current layout)");
    CHECK(tensor(m, "model.layers.2.mlp.experts.gate_proj.weight").quant->logical_ne == std::vector<uint64_t>{128, 16, 128});
}

TEST_CASE("experts, current layout with mixed quantization: one blob per projection", "[ollama]") {
    TensorStore s;
    const std::string gate = "model.layers.3.mlp.experts.gate_proj.weight", down = "model.layers.3.mlp.experts.down_proj.weight";
    SafetensorsBuilder a, b;
    a.metadata("quant_type", "int4").metadata("group_size", "64");
    add_quantized(a, gate, {8, 16, 8}, 1);
    b.metadata("quant_type", "int8").metadata("group_size", "64");
    add_quantized(b, down, {8, 16, 16}, 1);
    s.blob(gate, a);
    s.blob(down, b);
    Model m = s.open();
    REQUIRE(m.groups.size() == 1);
    const TensorGroup& g = m.groups[0];
    CHECK(g.count == 8);
    CHECK(g.parts == std::vector<std::string>{"gate_proj", "down_proj"});
    CHECK(g.layout == "stacked, one blob per tensor (current layout)");
    CHECK(tensor(m, gate).quant->type == "int4");
    CHECK(tensor(m, down).quant->type == "int8");
    CHECK(tensor(m, down).quant->logical_ne == std::vector<uint64_t>{64, 16, 8});
}

TEST_CASE("experts stacked by the source, and shared experts, each in their own blob", "[ollama]") {
    TensorStore s;
    SafetensorsBuilder stacked, shared_gate, shared_up;
    add(stacked, "model.layers.4.mlp.experts.gate_up_proj.weight", "BF16", {16, 32, 8});
    add(shared_gate, "model.layers.4.mlp.shared_experts.gate_proj.weight", "BF16", {16, 8});
    add(shared_up, "model.layers.4.mlp.shared_experts.up_proj.weight", "BF16", {16, 8});
    s.blob("model.layers.4.mlp.experts.gate_up_proj.weight", stacked);
    s.blob("model.layers.4.mlp.shared_experts.gate_proj.weight", shared_gate);
    s.blob("model.layers.4.mlp.shared_experts.up_proj.weight", shared_up);
    Model m = s.open();
    REQUIRE(m.groups.size() == 2);
    const TensorGroup* experts = group(m, "model.layers.4.mlp.experts");
    REQUIRE(experts);
    CHECK(experts->count == 16);
    CHECK(experts->parts == std::vector<std::string>{"gate_up_proj"});
    CHECK(experts->layout == "stacked, one blob per tensor (current layout)");
    const TensorGroup* shared = group(m, "model.layers.4.mlp.shared_experts");
    REQUIRE(shared);
    CHECK(shared->count == 1);
    CHECK(shared->members.size() == 2);
    CHECK(shared->layout == "one unstacked expert, one blob per tensor");
}

TEST_CASE("stacked members that disagree on the expert count are flagged", "[ollama]") {
    SafetensorsBuilder sb;
    add(sb, "model.layers.0.mlp.experts.gate_proj.weight", "BF16", {4, 2, 2});
    add(sb, "model.layers.0.mlp.experts.up_proj.weight", "BF16", {5, 2, 2});
    Model m = blob_model(sb, "model.layers.0.mlp.experts");
    CHECK(has_warning(m, "W_EXPERT_COUNT_MISMATCH"));
    REQUIRE(m.groups.size() == 1);
    CHECK(m.groups[0].count == 4);
}

TEST_CASE("a store model opens all its tensor blobs as one Model", "[ollama]") {
    TensorStore s;
    SafetensorsBuilder q, norm;
    q.metadata("quant_type", "int4").metadata("group_size", "64");
    add_quantized(q, kT, {4, 16}, 2);
    add(norm, "model.norm.weight", "BF16", {128});
    s.blob(kT, q);
    s.blob("model.norm.weight", norm);
    s.blob(kT, q);  // the same blob twice is read once
    Model m = s.open();
    CHECK(m.format == Format::safetensors);
    REQUIRE(m.files.size() == 3);  // two tensor blobs and config.json
    CHECK(m.files[0].path.find("/blobs/sha256-") != std::string::npos);
    CHECK(m.tensors.size() == 4);
    CHECK(tensor(m, "model.norm.weight").file == 1);
    auto cfg = m.get_string("file:config.json");
    REQUIRE(cfg);
    CHECK(cfg->find("\"bits\":4") != std::string::npos);
    const MetadataEntry* qt = m.find("quant_type");
    REQUIRE(qt);
    CHECK(qt->file == 0);
    CHECK(tensor(m, kT).quant->type == "int4");
}

TEST_CASE("config.json's quantization bits decide ambiguous shapes", "[ollama]") {
    for (uint32_t bits : {4u, 8u}) {
        INFO(bits);
        TensorStore s;
        SafetensorsBuilder sb;
        add_quantized(sb, kT, {4, 16}, 2);
        s.blob(kT, sb);
        Model m = s.open("{\"text_config\":{\"quantization_config\":{\"bits\":" + std::to_string(bits) + "}}}");
        CHECK(tensor(m, kT).quant->type == (bits == 8 ? "int8" : "int4"));
        CHECK(!has_warning(m, "W_QUANT_AMBIGUOUS"));
    }
}

TEST_CASE("a GGUF store model opens its model blob", "[ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    auto store = Store::open(b.root());
    REQUIRE(store);
    auto model = open_store_model(*store, *parse_model_reference("tiny"));
    REQUIRE(model);
    CHECK(model->format == Format::gguf);
    CHECK(model->error_count() == 0);
    REQUIRE(model->tensors.size() == 1);
    CHECK(model->tensors[0].name == "w");
    CHECK(model->files[0].path == store->root() + "/" + "blobs/sha256-" + b.tiny_model_layer().digest.substr(7));
    CHECK(model->get_string("general.architecture") == std::string("llama"));
}

TEST_CASE("store models that cannot open say why", "[ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    auto store = Store::open(b.root());
    REQUIRE(store);
    SECTION("no such model") {
        auto model = open_store_model(*store, *parse_model_reference("nope"));
        REQUIRE(!model);
        CHECK(model.error().code == ErrorCode::E_NOT_FOUND);
    }
    SECTION("an invalid manifest") {
        LayerSpec bad = b.tiny_model_layer();
        bad.digest = "sha256:../../x";
        b.write_manifest("registry.ollama.ai/library/evil/latest", manifest_json(b.tiny_config_layer(), {bad}));
        auto model = open_store_model(*store, *parse_model_reference("evil"));
        REQUIRE(!model);
        CHECK(model.error().code == ErrorCode::E_BAD_DIGEST);
    }
    SECTION("a missing tensor blob leaves a partial model") {
        SafetensorsBuilder present, absent;
        add(present, "a.weight", "BF16", {2});
        add(absent, "b.weight", "BF16", {2});
        LayerSpec there = b.blob(kTensorMediaType, present.bytes(), std::string("a.weight"));
        auto bytes = absent.bytes();
        LayerSpec missing(std::string(kTensorMediaType), "sha256:" + sha256_hex(bytes), bytes.size(), std::nullopt,
                          std::string("b.weight"));
        b.add_model("st", {there, missing}, "{\"model_format\":\"safetensors\"}");
        auto model = open_store_model(*store, *parse_model_reference("st"));
        REQUIRE(model);
        CHECK(model->partial);
        CHECK(model->tensors.size() == 1);
        REQUIRE(model->error_count() == 1);
        CHECK(model->diagnostics[0].code == ErrorCode::E_BLOB_MISSING);
        CHECK(model->diagnostics[0].field == "layers[1]");
        // The missing blob keeps its place among the files, so views say which files they describe.
        REQUIRE(model->files.size() == 2);
        CHECK(model->files[1].path == "sha256-" + sha256_hex(bytes));
        CHECK(model->missing_files() == std::vector<uint32_t>{1});
        const ModelSummary summary = summarize(*model);
        CHECK(summary.missing_files == 1);
        CHECK(summary.present_files_text() == " in the 1 of 2 files present");
    }
}
