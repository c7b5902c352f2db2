#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <imgui.h>

#include "build_paths.h"
#include "app_shell.h"
#include "broken_store.h"
#include "headless.h"
#include "mlens/model/summary.h"
#include "mlens/open/target.h"
#include "panels/safetensors_panel.h"
#include "panels/store_panel.h"
#include "state/workspace.h"
#include "workspace_harness.h"

using namespace mlens;
using mlens::test::HeadlessImGui;
using mlens::test::TempDir;

namespace fs = std::filesystem;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

struct StoreHarness : test::WorkspaceHarness {
    Document& open(const std::string& path) { return open_ready(path); }
    void draw(Panel& panel, Document& doc, int frames = 2) {
        for (int i = 0; i < frames; ++i) {
            PanelContext ctx = context_of(doc);
            imgui.window_frame("panel", 1400, 900, [&] { panel.draw(ctx); });
        }
    }
};

// Where the listing shows the model `name` (models come sorted by full name).
size_t model_index(const StoreListing& l, const std::string& name) {
    for (size_t i = 0; i < l.models.size(); ++i)
        if (l.models[i].ref.name.display() == name) return i;
    FAIL("the store lists no " << name);
    return 0;
}

const TensorInfo* tensor(const Model& m, const std::string& name) {
    const TensorInfo* t = m.find_tensor(name);
    if (!t) FAIL("no tensor " << name);
    return t;
}

}  // namespace

TEST_CASE("the demo store opens as a store document listing its models", "[gui-store]") {
    REQUIRE(is_store_root(kDemoStore));
    CHECK(demo_documents(MLENS_DEMO_DIR).front() == kDemoStore);
    StoreHarness h;
    Document& doc = h.open(kDemoStore);
    REQUIRE(doc.is_store());
    CHECK(doc.title == "Ollama store \xC2\xB7 ollama-store");
    const StoreListing& l = doc.store()->listing;
    REQUIRE(l.models.size() == 6);
    CHECK(l.models[0].ref.name.display() == "tiny-llama:q4_0");
    CHECK(l.models[0].format == "gguf");
    CHECK(l.models[0].quantization == "Q4_0");
    CHECK(l.models[0].family == "llama");
    CHECK(l.models[1].ref.name.display() == "tiny-mlx:mixed");
    const ModelListing& moe = l.models[model_index(l, "tiny-moe:int4")];
    CHECK(moe.format == "safetensors");
    CHECK(moe.quantization == "int4");
    for (const ModelListing& m : l.models) CHECK(m.ok());
    for (const PanelInfo& p : panel_registry())
        CHECK(panel_shows(p, doc) == (std::string(p.id) == "store" || std::string(p.id) == "store_models"));
}

TEST_CASE("the store panel shows a tensor-blob model's layers, quantization and expert groups", "[gui-store]") {
    StoreHarness h;
    Document& doc = h.open(kDemoStore);
    StorePanel panel;
    StoreModelsPanel models;
    h.draw(models, doc);
    h.draw(panel, doc);
    CHECK(panel.detail() == nullptr);
    REQUIRE(panel.accept_link("store-model:tiny-moe:int4", doc));
    REQUIRE(models.accept_link("store-model:tiny-moe:int4", doc));
    CHECK(panel.shown_model() == model_index(doc.store()->listing, "tiny-moe:int4"));
    h.draw(panel, doc, 1);
    h.jobs.wait_all();
    h.draw(panel, doc);
    REQUIRE(panel.detail() != nullptr);
    const StoreModelDetail& d = *panel.detail();
    REQUIRE(d.view.layers.size() == 4);
    CHECK(d.view.layers[2].layer.kind == LayerKind::tensor);
    CHECK(d.view.layers[2].layer.name == std::optional<std::string>("model.layers.0.mlp.experts"));
    CHECK(d.view.layers[3].layer.kind == LayerKind::json);
    REQUIRE(d.view.config);
    CHECK(d.view.config->file_type == "int4");
    REQUIRE(d.model);
    const Model& m = *d.model;
    CHECK(m.format == Format::safetensors);
    CHECK(m.tensors.size() == 13);
    const TensorInfo* q = tensor(m, "model.layers.0.self_attn.q_proj.weight");
    REQUIRE(q->quant);
    CHECK(q->quant->type == "int4");
    CHECK(q->quant->group_size == 64);
    CHECK(q->quant->bits == 4);
    CHECK(q->ne == std::vector<uint64_t>{8, 64});
    CHECK(q->quant->logical_ne == std::vector<uint64_t>{64, 64});
    const TensorInfo* gate = tensor(m, "model.layers.0.mlp.experts.gate_proj.weight");
    REQUIRE(gate->quant);
    CHECK(gate->quant->logical_ne == std::vector<uint64_t>{64, 64, 4});
    REQUIRE(m.groups.size() == 1);
    CHECK(m.groups[0].name == "model.layers.0.mlp.experts");
    CHECK(m.groups[0].count == 4);
    CHECK(m.groups[0].parts.size() == 3);
    CHECK(m.groups[0].members.size() == 3);
    // The summary: the config's facts, the parameters of the logical tensors, Ollama's capabilities.
    CHECK(d.summary.format == "safetensors");
    CHECK(d.summary.family == "qwen3moe");
    REQUIRE(d.summary.parameters);
    CHECK(*d.summary.parameters == summarize(m).parameters);
    CHECK(human_count(*d.summary.parameters) == "55.3 K");
    CHECK(d.summary.quantization == "int4");
    CHECK(d.summary.capabilities == std::vector<std::string>{"completion"});

    // Verify the expert blob: a job hashing it, with the result kept per digest.
    const std::string digest = d.view.layers[2].layer.digest;
    PanelContext ctx = h.context_of(doc);
    panel.verify(ctx, 2);
    h.jobs.wait_all();
    REQUIRE(panel.verified(digest).has_value());
    CHECK(panel.verified(digest)->ok());
    h.draw(panel, doc);

    // The GGUF model shows its text layers.
    REQUIRE(panel.accept_link(doc.store()->listing.models[0].ref.name.full(), doc));
    h.draw(panel, doc, 1);
    h.jobs.wait_all();
    h.draw(panel, doc);
    REQUIRE(panel.detail());
    size_t text_layers = 0;
    for (const LayerView& lv : panel.detail()->view.layers)
        if (lv.text) ++text_layers;
    CHECK(text_layers == 4);
    CHECK(panel.detail()->model->tensors.size() == 21);
    CHECK(panel.detail()->summary.capabilities == std::vector<std::string>{"completion"});
    CHECK(human_count(*panel.detail()->summary.parameters) == "4.19 M");
    CHECK(panel.detail()->summary.context_length == std::optional<uint64_t>(256));
    CHECK(panel.detail()->summary.licenses.size() == 1);
    // The layers, closed at first, draw grouped by media type when opened.
    panel.open_layers();
    h.draw(panel, doc, 2);
}

TEST_CASE("verifying a blob whose content changed reports the digest mismatch", "[gui-store]") {
    TempDir dir;
    std::string root = dir.file("store");
    fs::copy(kDemoStore, root, fs::copy_options::recursive);
    StoreHarness h;
    Document& doc = h.open(root);
    StorePanel panel;
    REQUIRE(panel.accept_link(doc.store()->listing.models[0].ref.name.full(), doc));
    h.draw(panel, doc, 1);
    h.jobs.wait_all();
    h.draw(panel, doc);
    REQUIRE(panel.detail());
    const LayerView& model_layer = panel.detail()->view.layers[0];
    REQUIRE(model_layer.layer.kind == LayerKind::model);
    {
        std::fstream f(model_layer.blob->path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.put('\x5A');
    }
    PanelContext ctx = h.context_of(doc);
    panel.verify(ctx, 0);
    h.jobs.wait_all();
    REQUIRE(panel.verified(model_layer.layer.digest).has_value());
    CHECK(panel.verified(model_layer.layer.digest)->error().code == ErrorCode::E_DIGEST_MISMATCH);
    h.draw(panel, doc);
}

TEST_CASE("a store model opens by its manifest path and shows its safetensors headers", "[gui-store]") {
    StoreHarness h;
    std::string manifest = kDemoStore + "/manifests/registry.ollama.ai/library/tiny-moe/int4";
    Target parsed = resolve(manifest);
    REQUIRE(parsed.kind == TargetKind::store_model);
    CHECK(parsed.name.display() == "tiny-moe:int4");
    CHECK(resolve(kDemoStore + "/blobs").kind == TargetKind::not_a_model);
    Document& doc = h.open(manifest);
    CHECK(doc.title == "tiny-moe:int4 (Ollama)");
    CHECK_FALSE(doc.is_store());
    const Model& m = *doc.model();
    CHECK(m.format == Format::safetensors);
    CHECK(safetensors_shards(m).size() == 3);
    std::vector<size_t> side = side_file_entries(m);
    REQUIRE(side.size() == 1);
    CHECK(m.metadata[side[0]].key == "file:config.json");
    CHECK(m.metadata[side[0]].value.string_value().find("\"num_experts\": 4") != std::string::npos);

    SafetensorsPanel panel;
    for (auto view :
         {SafetensorsPanel::View::tensors, SafetensorsPanel::View::tree, SafetensorsPanel::View::metadata, SafetensorsPanel::View::files}) {
        panel.show(view);
        h.draw(panel, doc, 3);
    }
    CHECK(panel.tree_parsed());
    CHECK(panel.badge(doc) == "3 shards");
}

TEST_CASE("a model reference opens as that model of the default store", "[gui-store]") {
    StoreHarness h;
    mlens::test::ScopedEnv env("OLLAMA_MODELS", kDemoStore);
    Document& doc = h.open("tiny-moe:int4");
    CHECK(doc.title == "tiny-moe:int4 (Ollama)");
    CHECK(doc.path == kDemoStore + "/manifests/registry.ollama.ai/library/tiny-moe/int4");
    CHECK(doc.model()->format == Format::safetensors);
    // The same reference again brings the open document to the front instead of a second one.
    CHECK(&h.workspace.open("tiny-moe:int4") == &doc);
    // So do its manifest and STORE/reference: one resolver, one document.
    CHECK(&h.workspace.open(kDemoStore + "/manifests/registry.ollama.ai/library/tiny-moe/int4") == &doc);
    CHECK(&h.workspace.open(kDemoStore + "/tiny-moe:int4") == &doc);
    CHECK(h.workspace.documents().size() == 1);
}

TEST_CASE("the shell draws the store and its models with every panel", "[gui-store]") {
    StoreHarness h;
    AppShell shell(h.settings, h.jobs, h.imgui.fonts(), ShellOptions{});
    shell.open(kDemoStore);
    h.jobs.wait_all();
    for (int i = 0; i < 3; ++i) h.imgui.frame([&] { shell.frame(); });
    Document* doc = shell.workspace().active();
    REQUIRE(doc);
    REQUIRE(doc->is_store());
    for (size_t model = 0; model < doc->store()->listing.models.size(); ++model) {
        doc->follow("store-model:" + doc->store()->listing.models[model].ref.name.full());
        h.imgui.frame([&] { shell.frame(); });
        h.jobs.wait_all();
        for (int i = 0; i < 3; ++i) h.imgui.frame([&] { shell.frame(); });
    }
    shell.open(kDemoStore + "/manifests/registry.ollama.ai/library/tiny-moe/int4");
    h.jobs.wait_all();
    for (const char* panel : {"safetensors", "weights", "tensors", "metadata", "diagnostics"}) {
        for (int i = 0; i < 3; ++i) h.imgui.frame([&] { shell.frame(); });
        Document* model = shell.workspace().active();
        REQUIRE(model);
        REQUIRE(model->ready());
        model->select({SelectionKind::tensor, 0}, panel);
    }
    for (int i = 0; i < 3; ++i) h.imgui.frame([&] { shell.frame(); });
    h.jobs.wait_all();
    for (int i = 0; i < 2; ++i) h.imgui.frame([&] { shell.frame(); });
}

TEST_CASE("a damaged store: the list, the navigator and the model page show the check's verdict", "[gui-store]") {
    TempDir dir, outside;
    test::OllamaStoreBuilder builder(dir.path());
    const std::vector<test::BrokenModel> broken = test::write_broken_store(builder, outside.path());
    StoreHarness h;
    Document& doc = h.open(dir.path());
    StorePanel panel;
    StoreModelsPanel models;
    // The listing reads no blob (and the cache knows none of this fresh store's): what the blobs'
    // metadata shows (missing, not a regular file, outside the root) is known at once, the rest is
    // "not yet verified"; the first frame starts the verification job.
    size_t known = 0;
    for (const test::BrokenModel& b : broken) {
        const ModelListing& m = doc.store()->listing.models[model_index(doc.store()->listing, b.name)];
        INFO(b.name);
        if (m.check.verdict() == Verdict::errors) {
            ++known;
            CHECK(m.check.short_reason().starts_with(b.structure_code));
        } else {
            CHECK(m.check.verdict() == Verdict::unverified);
            CHECK(m.check.reason_text() == "not yet verified");
        }
        CHECK(!m.check.digests_verified);
    }
    CHECK(known == 4);
    CHECK(doc.store()->listing.models[model_index(doc.store()->listing, "tiny:latest")].check.verdict() == Verdict::unverified);
    h.draw(models, doc, 1);
    h.draw(panel, doc, 1);
    REQUIRE(doc.store()->digests->started);
    h.jobs.wait_all();
    h.draw(models, doc);
    h.draw(panel, doc);
    const StoreListing& l = doc.store()->listing;
    CHECK(l.digests_verified);
    CHECK(digest_pass_text(*doc.store()) == "digests verified");
    CHECK(l.models[model_index(l, "tiny:latest")].ok());
    for (const test::BrokenModel& b : broken) {
        const ModelListing& m = l.models[model_index(l, b.name)];
        INFO(b.name);
        CHECK(!m.ok());
        CHECK(m.check.digests_verified);
        CHECK(m.check.short_reason().starts_with(b.verified_code));
    }

    // The model page of the damaged tensor-blob model: its five readable tensors and the four
    // layers that could not be read, with the listing's verdict.
    REQUIRE(panel.accept_link("store-model:damaged-st:latest", doc));
    REQUIRE(panel.shown_model() == model_index(l, "damaged-st:latest"));
    h.draw(panel, doc, 1);
    h.jobs.wait_all();
    h.draw(panel, doc);
    REQUIRE(panel.detail() != nullptr);
    REQUIRE(panel.detail()->model);
    CHECK(panel.detail()->model->tensors.size() == 5);
    const ModelListing& damaged = l.models[*panel.shown_model()];
    std::vector<FailedTensorLayer> failed = failed_tensor_layers(panel.detail()->view.stored.manifest, damaged.check);
    CHECK(failed.size() == 4);
    CHECK(failed.size() + panel.detail()->model->tensors.size() == test::damaged_st_tensor_names().size());
}
