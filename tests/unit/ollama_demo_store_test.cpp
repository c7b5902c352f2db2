// The demo Ollama store (app/demo/demo_store.h) read back through the core: the listing, then
// every model opened by its reference with open_model, each tensor blob's quantization, logical
// shape, blob and expert groups checked exactly, and every tensor decoded close to the seeded
// source it was written from (demo_source.h), within a bound each mode's format guarantees.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "build_paths.h"
#include "demo_source.h"
#include "mlens/model/summary.h"
#include "mlens/ollama/store.h"
#include "mlens/ollama/store_listing.h"
#include "mlens/open/target.h"
#include "mlens/quant/tensor_view.h"
#include "test_paths.h"

using namespace mlens;
using mlens::test::ScopedEnv;

namespace {

const std::string kStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

struct QuantExpect {
    std::string tensor;
    std::string type;
    uint64_t group;
    std::vector<uint64_t> shape;  // logical, slowest dimension first
    std::string scale_dtype;
    std::string origin;
    bool global_scale = false;
};

struct PlainExpect {
    std::string tensor;
    std::string dtype;
    std::vector<uint64_t> shape;
};

struct GroupExpect {
    std::string name;
    uint64_t count;
    std::vector<std::string> parts;
    size_t members;
    std::string layout;
};

struct ModelExpect {
    std::string ref;
    std::string family;
    std::vector<LayerKind> layers;
    std::map<std::string, std::string> blob_of;  // tensor -> layer name, when it is not the tensor's own
    std::vector<QuantExpect> quant;
    std::vector<PlainExpect> plain;
    std::vector<GroupExpect> groups;
};

const std::string kBlobKeys = "type: blob metadata; group size: blob metadata";
const std::string kTensorKeys = "type: tensor metadata; group size: tensor metadata";
const std::string kInferred = "type: inferred from shapes; group size: inferred from shapes";
// Parts in the order of the blobs' sorted entries.
const std::vector<std::string> kParts = {"down_proj", "gate_proj", "up_proj"};

std::vector<LayerKind> tensors_then(size_t tensors, std::vector<LayerKind> rest) {
    std::vector<LayerKind> kinds(tensors, LayerKind::tensor);
    kinds.insert(kinds.end(), rest.begin(), rest.end());
    return kinds;
}

std::vector<ModelExpect> expected_models() {
    using K = LayerKind;
    const std::string l0 = "model.layers.0.";
    std::vector<ModelExpect> out;

    ModelExpect mixed{"tiny-mlx:mixed", "qwen3", tensors_then(12, {K::json, K::template_text, K::params, K::license}), {}, {}, {}, {}};
    mixed.quant = {
        {l0 + "self_attn.q_proj.weight", "int4", 64, {64, 64}, "BF16", kBlobKeys},
        {l0 + "self_attn.k_proj.weight", "int8", 64, {32, 64}, "BF16", kBlobKeys},
        {l0 + "self_attn.v_proj.weight", "int4", 32, {32, 64}, "F16", kBlobKeys},
        {l0 + "self_attn.o_proj.weight", "nvfp4", 16, {64, 64}, "U8", "type: blob metadata; group size: table default", true},
        {l0 + "mlp.gate_proj.weight", "nvfp4", 16, {128, 64}, "U8", kBlobKeys},
        {l0 + "mlp.up_proj.weight", "mxfp4", 32, {128, 64}, "U8", kBlobKeys},
        {l0 + "mlp.down_proj.weight", "mxfp8", 32, {64, 128}, "U8", kBlobKeys},
        {"lm_head.weight", "int8", 64, {32, 64}, "BF16", kBlobKeys},
    };
    mixed.plain = {{"model.embed_tokens.weight", "BF16", {32, 64}},
                   {l0 + "input_layernorm.weight", "BF16", {64}},
                   {l0 + "post_attention_layernorm.weight", "BF16", {64}},
                   {"model.norm.weight", "BF16", {64}}};
    out.push_back(mixed);

    ModelExpect moe{"tiny-moe:int4", "qwen3moe", tensors_then(3, {K::json}), {}, {}, {}, {}};
    moe.quant = {{l0 + "self_attn.q_proj.weight", "int4", 64, {64, 64}, "F16", kBlobKeys}};
    for (const std::string& part : kParts) {
        std::string name = l0 + "mlp.experts." + part + ".weight";
        moe.quant.push_back({name, "int4", 64, {4, 64, 64}, "F16", kBlobKeys});
        moe.blob_of[name] = l0 + "mlp.experts";
    }
    moe.plain = {{"model.embed_tokens.weight", "F16", {32, 64}}};
    moe.groups = {{l0 + "mlp.experts", 4, kParts, 3, "stacked, every projection in one group blob (current layout)"}};
    out.push_back(moe);

    ModelExpect shared{"tiny-moe-shared:int4", "deepseek2", tensors_then(8, {K::json, K::system, K::params, K::license}), {}, {}, {}, {}};
    for (const std::string& part : kParts) {
        std::string type = part == "down_proj" ? "int8" : "int4";
        shared.quant.push_back({l0 + "mlp.experts." + part + ".weight", type, 64, {4, 64, 64}, "BF16", kBlobKeys});
        shared.quant.push_back({l0 + "mlp.shared_experts." + part + ".weight", type, 64, {64, 64}, "BF16", kBlobKeys});
    }
    shared.plain = {{"model.embed_tokens.weight", "BF16", {32, 64}}, {l0 + "mlp.gate.weight", "BF16", {4, 64}}};
    // One blob per projection, in the manifest's order.
    const std::vector<std::string> blob_order = {"gate_proj", "up_proj", "down_proj"};
    shared.groups = {{l0 + "mlp.experts", 4, blob_order, 3, "stacked, one blob per tensor (current layout)"},
                     {l0 + "mlp.shared_experts", 1, blob_order, 3, "one unstacked expert, one blob per tensor"}};
    out.push_back(shared);

    ModelExpect per_expert{
        "tiny-moe-legacy:per-expert", "deepseek2", tensors_then(4, {K::json, K::template_text, K::license}), {}, {}, {}, {}};
    per_expert.quant = {{l0 + "self_attn.q_proj.weight", "int4", 32, {64, 64}, "BF16", kBlobKeys}};
    for (const std::string& part : kParts) {
        for (int e = 0; e < 4; ++e) {
            std::string name = l0 + "mlp.experts." + std::to_string(e) + "." + part + ".weight";
            per_expert.quant.push_back({name, "int4", 32, {64, 64}, "BF16", kInferred});
            per_expert.blob_of[name] = l0 + "mlp.experts";
        }
        std::string name = l0 + "mlp.shared_experts." + part + ".weight";
        per_expert.quant.push_back({name, "int4", 32, {64, 64}, "BF16", kInferred});
        per_expert.blob_of[name] = l0 + "mlp.shared_experts";
    }
    per_expert.plain = {{"model.embed_tokens.weight", "BF16", {32, 64}}};
    per_expert.groups = {{l0 + "mlp.experts", 4, kParts, 12, "per-expert tensors packed in one group blob (2026-02 to 2026-03 layout)"},
                         {l0 + "mlp.shared_experts", 1, kParts, 3, "one unstacked expert"}};
    out.push_back(per_expert);

    ModelExpect switch_mlp{"tiny-moe-legacy:switch-mlp", "qwen3moe", tensors_then(3, {K::json, K::license}), {}, {}, {}, {}};
    switch_mlp.quant = {{l0 + "self_attn.q_proj.weight", "int4", 64, {64, 64}, "BF16", kTensorKeys}};
    for (const std::string& part : kParts) {
        std::string name = l0 + "mlp.switch_mlp." + part + ".weight";
        switch_mlp.quant.push_back({name, part == "down_proj" ? "int8" : "int4", 64, {4, 64, 64}, "BF16", kTensorKeys});
        switch_mlp.blob_of[name] = l0 + "mlp.experts";
    }
    switch_mlp.plain = {{"model.embed_tokens.weight", "BF16", {32, 64}}};
    switch_mlp.groups = {
        {l0 + "mlp.switch_mlp", 4, kParts, 3, "stacked switch_mlp tensors in a blob named ...mlp.experts (2026-03 to 2026-07 layout)"}};
    out.push_back(switch_mlp);
    return out;
}

std::vector<uint64_t> reversed(const std::vector<uint64_t>& v) { return {v.rbegin(), v.rend()}; }

// The largest error the stored format allows for a group whose source values are `src`, from the
// group's range (affine) or absolute maximum (the rest):
//  - affine: half a code step, plus what rounding the scale and the bias to their dtype costs
//    (relative precision eps, 2^-8 for BF16 and 2^-11 for F16): the top codes drift by up to
//    levels x eps steps and are clamped there, the bias by eps of the maximum;
//  - nvfp4: at most one E2M1 step (2 between 4 and 6) times the E4M3 scale ~ amax / 6, which its
//    3-bit mantissa may round up by 1/16: 0.18 amax (also with a global scale, which only
//    moves the scales into E4M3's range);
//  - mxfp4: the power-of-two scale 2^e leaves amax / 2^e in (3, 6], and the error is at most
//    one code step 2^e: below amax / 3;
//  - mxfp8: E4M3 keeps 3 mantissa bits, half an ulp is 1/16 of the value, plus subnormal steps
//    of 2^(e-10): amax / 16 plus amax / 2^17;
//  - plain BF16 / F16: rounding to 8 or 11 significant bits, 2^-8 of the maximum.
float error_bound(const std::string& type, const std::string& scale_dtype, const float* src, uint64_t n) {
    float lo = *std::min_element(src, src + n), hi = *std::max_element(src, src + n);
    float amax = std::max(std::fabs(lo), std::fabs(hi));
    if (type == "int4" || type == "int8") {
        const float levels = type == "int4" ? 15.0f : 255.0f;
        const float eps = scale_dtype == "F16" ? 1.0f / 2048.0f : 1.0f / 256.0f;
        const float step = (hi - lo) / levels * (1.0f + eps);
        return step * (0.5f + levels * eps) + amax * eps;
    }
    if (type == "nvfp4") return 0.18f * amax;
    if (type == "mxfp4") return amax / 3.0f;
    if (type == "mxfp8") return amax / 16.0f + amax / 131072.0f;
    return amax / 256.0f;
}

// Decodes tensor `index` and compares it with its seeded source, group by group.
void check_close_to_source(const Model& m, size_t index, const std::string& type, const std::string& scale_dtype, uint64_t group) {
    const TensorInfo& t = m.tensors[index];
    INFO(t.name << " (" << type << ")");
    auto view = TensorView::open(m, index);
    REQUIRE(view.ok());
    const uint64_t n = view->size();
    std::vector<float> got(n);
    REQUIRE(view->read(0, n, got.data()).ok());
    std::vector<float> src = demo::demo_source_values(t.name, n);
    REQUIRE(n % group == 0);
    size_t failures = 0;
    float worst = 0;
    for (uint64_t g = 0; g < n / group; ++g) {
        const float bound = error_bound(type, scale_dtype, src.data() + g * group, group);
        for (uint64_t j = g * group; j < (g + 1) * group; ++j) {
            float err = std::fabs(got[j] - src[j]);
            worst = std::max(worst, err / bound);
            if (!(err <= bound)) ++failures;
        }
    }
    INFO("worst error / bound " << worst);
    CHECK(failures == 0);
}

}  // namespace

TEST_CASE("the demo store lists its six models, all ok, every blob referenced", "[ollama][demo]") {
    auto store = Store::open(kStore);
    REQUIRE(store.ok());
    StoreListing l = list_store(*store).value;
    std::vector<std::string> names;
    for (const ModelListing& m : l.models) {
        names.push_back(m.ref.name.display());
        CHECK(m.ok());
        CHECK(m.format == (names.back() == "tiny-llama:q4_0" ? "gguf" : "safetensors"));
        CHECK(m.quantization == (names.back() == "tiny-llama:q4_0" ? "Q4_0" : "int4"));
    }
    // Each config's parameter size is the model's weight count, as Ollama writes it ("55.3K").
    ScopedEnv env("OLLAMA_MODELS", kStore);
    for (const ModelListing& m : l.models) {
        auto model = open_model(m.ref.name.display());
        REQUIRE(model.ok());
        const double weights = static_cast<double>(summarize(*model).parameters);
        char size[32];
        if (weights >= 1e6)
            std::snprintf(size, sizeof size, "%.1fM", weights / 1e6);
        else
            std::snprintf(size, sizeof size, "%.1fK", weights / 1e3);
        CHECK(m.parameter_size == size);
    }
    CHECK(names ==
          std::vector<std::string>{"tiny-llama:q4_0", "tiny-mlx:mixed", "tiny-moe-legacy:per-expert", "tiny-moe-legacy:switch-mlp",
                                   "tiny-moe-shared:int4", "tiny-moe:int4"});
    CHECK(l.diagnostics.empty());
    for (const ListedBlobFile& b : l.blob_files) {
        INFO(b.file.name);
        CHECK(b.referenced);
        CHECK(b.file.kind.kind == BlobFileKind::blob);
    }
    uint64_t bytes = 0;
    for (const ListedBlobFile& b : l.blob_files) bytes += b.file.size;
    // Everything but the GGUF model blob (the 3 MB Q4_0 demo GGUF) stays small.
    CHECK(bytes < 3'500'000);
}

TEST_CASE("the demo GGUF model opens by its reference", "[ollama][demo]") {
    ScopedEnv env("OLLAMA_MODELS", kStore);
    auto m = open_model("tiny-llama:q4_0");
    REQUIRE(m.ok());
    Target by_reference = resolve("tiny-llama:q4_0");
    CHECK(by_reference.kind == TargetKind::store_model);
    CHECK(by_reference.path == kStore + "/manifests/registry.ollama.ai/library/tiny-llama/q4_0");
    CHECK(resolve("tiny-llama:absent").kind == TargetKind::missing);
    CHECK(resolve(kStore).kind == TargetKind::store_root);  // an existing path is no reference
    CHECK(m->format == Format::gguf);
    CHECK(m->diagnostics.empty());
    REQUIRE(m->find_tensor("blk.0.attn_q.weight"));
    CHECK(m->find_tensor("blk.0.attn_q.weight")->type.name == "Q4_0");
}

TEST_CASE("every demo tensor-blob model opens by its reference with the blobs the store declares", "[ollama][demo]") {
    auto store = Store::open(kStore);
    REQUIRE(store.ok());
    ScopedEnv env("OLLAMA_MODELS", kStore);
    for (const ModelExpect& e : expected_models()) {
        SECTION(e.ref) {
            auto name = parse_model_reference(e.ref);
            REQUIRE(name.ok());
            StoredManifest sm = store->read_manifest(*name);
            REQUIRE(sm.valid());
            std::vector<LayerKind> kinds;
            std::map<std::string, std::string> layer_of_path;
            for (const ManifestLayer& layer : sm.manifest.layers) {
                kinds.push_back(layer.kind);
                REQUIRE(layer.blob);
                BlobLookup found = store->find_blob(*layer.blob);
                REQUIRE(found.found());
                CHECK(found.size == layer.size);
                if (layer.kind == LayerKind::tensor) layer_of_path[found.path] = layer.name.value_or("");
                if (layer.kind == LayerKind::json) CHECK(layer.name == std::optional<std::string>("config.json"));
            }
            CHECK(kinds == e.layers);

            auto opened = open_model(e.ref);
            REQUIRE(opened.ok());
            const Model& m = *opened;
            CHECK(m.format == Format::safetensors);
            for (const Diagnostic& d : m.diagnostics) FAIL_CHECK(d.code << " " << d.field << ": " << d.message);
            const MetadataEntry* config = m.find("file:config.json");
            REQUIRE(config);
            CHECK(config->value.string_value().find("\"hidden_size\": 64") != std::string::npos);

            auto blob_of = [&](const TensorInfo& t) {
                REQUIRE(t.file < m.files.size());
                auto it = layer_of_path.find(m.files[t.file].path);
                REQUIRE(it != layer_of_path.end());
                return it->second;
            };
            size_t quantized = 0, plain = 0;
            for (const TensorInfo& t : m.tensors) {
                if (t.quant)
                    ++quantized;
                else if (!t.part_of)
                    ++plain;
            }
            CHECK(quantized == e.quant.size());
            CHECK(plain == e.plain.size());

            for (const QuantExpect& q : e.quant) {
                INFO(q.tensor);
                const TensorInfo* t = m.find_tensor(q.tensor);
                REQUIRE(t);
                REQUIRE(t->quant);
                const QuantLayout& ql = *t->quant;
                CHECK(ql.type == q.type);
                CHECK(ql.group_size == q.group);
                CHECK(ql.bits == (q.type == "int8" || q.type == "mxfp8" ? 8u : 4u));
                CHECK(ql.logical_ne == reversed(q.shape));
                CHECK(ql.origin == q.origin);
                CHECK(t->type.name == "U32");
                std::vector<uint64_t> stored = reversed(q.shape);
                stored[0] = stored[0] * ql.bits / 32;
                CHECK(t->ne == stored);
                REQUIRE(ql.scale);
                CHECK(m.tensors[*ql.scale].type.name == q.scale_dtype);
                CHECK(m.tensors[*ql.scale].ne[0] == q.shape.back() / q.group);
                CHECK(ql.bias.has_value() == (q.type == "int4" || q.type == "int8"));
                CHECK(ql.global_scale.has_value() == q.global_scale);
                auto own = e.blob_of.find(q.tensor);
                CHECK(blob_of(*t) == (own == e.blob_of.end() ? q.tensor : own->second));
                check_close_to_source(m, static_cast<size_t>(t - m.tensors.data()), q.type, q.scale_dtype, q.group);
            }
            for (const PlainExpect& p : e.plain) {
                INFO(p.tensor);
                const TensorInfo* t = m.find_tensor(p.tensor);
                REQUIRE(t);
                CHECK(t->type.name == p.dtype);
                CHECK(t->ne == reversed(p.shape));
                CHECK(blob_of(*t) == p.tensor);
                check_close_to_source(m, static_cast<size_t>(t - m.tensors.data()), p.dtype, p.dtype, t->ne[0]);
            }

            REQUIRE(m.groups.size() == e.groups.size());
            for (size_t i = 0; i < e.groups.size(); ++i) {
                const TensorGroup& g = m.groups[i];
                const GroupExpect& x = e.groups[i];
                INFO(x.name);
                CHECK(g.name == x.name);
                CHECK(g.kind == "experts");
                CHECK(g.count == x.count);
                CHECK(g.parts == x.parts);
                CHECK(g.members.size() == x.members);
                CHECK(g.layout == x.layout);
            }
        }
    }
}

TEST_CASE("the prequantized nvfp4 projection carries the global scale it was quantized with", "[ollama][demo]") {
    ScopedEnv env("OLLAMA_MODELS", kStore);
    auto m = open_model("tiny-mlx:mixed");
    REQUIRE(m.ok());
    const std::string name = "model.layers.0.self_attn.o_proj.weight";
    const TensorInfo* global = m->find_tensor(name + ".global_scale");
    REQUIRE(global);
    CHECK(global->type.name == "F32");
    CHECK(global->ne.empty());
    float stored = 0;
    REQUIRE(m->read_tensor_bytes(static_cast<size_t>(global - m->tensors.data()), 0, 4, &stored).ok());
    float amax = 0;
    for (float v : demo::demo_source_values(name, 64 * 64)) amax = std::max(amax, std::fabs(v));
    CHECK(stored == amax / (448.0f * 6.0f));
}
