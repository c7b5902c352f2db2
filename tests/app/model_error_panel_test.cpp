#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include <ggml.h>

#include <imgui.h>

#include "headless.h"
#include "hf_conversion_fixture.h"
#include "mlens/open/target.h"
#include "model_fixture.h"
#include "panels/model_error_panel.h"
#include "state/model_error_run.h"
#include "state/workspace.h"
#include "workspace_harness.h"

using namespace mlens;
using mlens::test::FixtureTensor;
using mlens::test::HeadlessImGui;
using mlens::test::TempDir;
using mlens::test::test_signal;

namespace {

// The same weights stored as `type`: an embedding, two blocks of two tensors, and "output.weight"
// whose width the candidate changes (`wide_output`) so that pair cannot be compared. The
// reference also has "rope_freqs.weight", which the candidate lacks.
std::vector<FixtureTensor> model_tensors(uint32_t type, bool reference, uint64_t width = 64) {
    auto t = [&](const char* name, uint64_t rows, uint32_t seed) {
        return FixtureTensor{name, type, {width, rows}, test_signal(width * rows, seed)};
    };
    std::vector<FixtureTensor> tensors = {t("token_embd.weight", 8, 1), t("blk.0.attn_q.weight", 4, 2), t("blk.0.ffn_down.weight", 4, 3),
                                          t("blk.1.attn_q.weight", 4, 4), t("blk.1.ffn_down.weight", 4, 5)};
    tensors.push_back({"output.weight", GGML_TYPE_F32, {width, reference ? 2u : 3u}, test_signal(width * (reference ? 2 : 3), 6)});
    if (reference) tensors.push_back({"rope_freqs.weight", GGML_TYPE_F32, {32}, test_signal(32, 7)});
    return tensors;
}

struct ModelErrorHarness : test::WorkspaceHarness {
    TempDir dir;
    Document* f32 = nullptr;  // reference
    Document* q4 = nullptr;  // candidate, the document the panel draws
    Document* copy = nullptr;  // the reference's tensors again, F32
    ModelErrorPanel panel;

    ModelErrorHarness() {
        test::write_fixture_model(dir.file("f32.gguf"), model_tensors(GGML_TYPE_F32, true));
        test::write_fixture_model(dir.file("q4_0.gguf"), model_tensors(GGML_TYPE_Q4_0, false));
        test::write_fixture_model(dir.file("copy.gguf"), model_tensors(GGML_TYPE_F32, true));
        std::vector<Document*> docs = open_all({dir.file("f32.gguf"), dir.file("q4_0.gguf"), dir.file("copy.gguf")});
        f32 = docs[0];
        q4 = docs[1];
        copy = docs[2];
    }
    PanelContext context() { return context_of(*q4); }
    void frame() {
        PanelContext ctx = context();
        imgui.window_frame("model error", 1400, 900, [&] { panel.draw(ctx); });
    }
    // Compares against `reference` and runs frames until the result is shown.
    const ModelErrorRun& compare(const Document& reference) {
        panel.set_reference(reference.id);
        PanelContext ctx = context();
        panel.start(ctx);
        jobs.wait_all();
        frame();
        frame();
        REQUIRE_FALSE(panel.running());
        REQUIRE(panel.result() != nullptr);
        return *panel.result();
    }
};

const TensorError& row_named(const ModelErrorRun& r, const std::string& name) {
    std::optional<size_t> row = find_tensor_row(r.error, name);
    REQUIRE(row);
    return r.error.tensors[*row];
}

}  // namespace

TEST_CASE("Model error compares every paired tensor of a Q4_0 file with its F32 reference", "[gui-model-error]") {
    ModelErrorHarness h;
    h.frame();
    // The first other model is picked as the reference.
    CHECK(h.panel.reference() == h.f32->id);
    const ModelErrorRun& r = h.compare(*h.f32);
    CHECK(r.reference_id == h.f32->id);
    REQUIRE(r.error.tensors.size() == 6);
    CHECK(r.compared == 5);
    CHECK(r.failed == 1);
    CHECK(r.only_reference == 1);
    CHECK(r.only_model == 0);
    CHECK(r.pooled_rmse > 0);
    for (const char* name : {"token_embd.weight", "blk.0.attn_q.weight", "blk.1.ffn_down.weight"}) {
        const TensorError& t = row_named(r, name);
        REQUIRE(t.error);
        CHECK(t.type_a == "F32");
        CHECK(t.type_b == "Q4_0");
        CHECK(t.error->rmse > 0);
        CHECK(t.error->cosine > 0.9);
    }
    const TensorError& output = row_named(r, "output.weight");
    CHECK_FALSE(output.error);
    CHECK(output.failed.find("element counts differ") != std::string::npos);
    // Layers -1 (token_embd), 0 and 1, each with its worst tensor.
    REQUIRE(r.error.layers.size() == 3);
    CHECK(r.error.layers[0].layer == -1);
    CHECK(r.error.layers[1].layer == 0);
    CHECK(r.error.layers[2].layer == 1);
    for (const LayerError& l : r.error.layers) {
        CHECK(l.rmse > 0);
        CHECK(find_tensor_row(r.error, l.worst_tensor));
    }
    CHECK(r.error.layers[1].tensors == 2);
    // Draw the result, with both layer metrics.
    for (int i = 0; i < 3; ++i) h.frame();
}

TEST_CASE("Model error of a file against the same tensors is zero", "[gui-model-error]") {
    ModelErrorHarness h;
    PanelContext ctx = h.context_of(*h.copy);
    ModelErrorPanel panel;
    panel.set_reference(h.f32->id);
    panel.start(ctx);
    h.jobs.wait_all();
    h.imgui.frame([&] { panel.draw(ctx); });
    REQUIRE(panel.result());
    const ModelErrorRun& r = *panel.result();
    CHECK(r.compared == 7);
    CHECK(r.failed == 0);
    CHECK(r.pooled_rmse == 0);
    for (const TensorError& t : r.error.tensors) {
        REQUIRE(t.error);
        CHECK(t.error->rmse == 0);
        CHECK(t.error->max_abs == 0);
    }
}

TEST_CASE("Model error rows sort by any column with failed tensors last", "[gui-model-error]") {
    ModelErrorHarness h;
    const ModelErrorRun& r = h.compare(*h.f32);
    for (bool descending : {false, true}) {
        std::vector<size_t> order = sorted_tensor_rows(r.error, ErrorColumn::rmse, descending);
        REQUIRE(order.size() == r.error.tensors.size());
        CHECK(r.error.tensors[order.back()].name_a == "output.weight");
        for (size_t i = 1; i + 1 < order.size(); ++i) {
            double prev = r.error.tensors[order[i - 1]].error->rmse, cur = r.error.tensors[order[i]].error->rmse;
            CHECK((descending ? prev >= cur : prev <= cur));
        }
    }
    std::vector<size_t> by_layer = sorted_tensor_rows(r.error, ErrorColumn::layer, true);
    CHECK(r.error.tensors[by_layer.front()].layer == 1);
}

TEST_CASE("Model error rows select their tensor in this document and bring the Weights panel forward", "[gui-model-error]") {
    ModelErrorHarness h;
    const ModelErrorRun& r = h.compare(*h.f32);
    std::optional<size_t> row = find_tensor_row(r.error, "blk.1.attn_q.weight");
    REQUIRE(row);
    h.q4->focus_panel.clear();
    h.panel.show_row(*h.q4, *row);
    CHECK(h.q4->selection.kind == SelectionKind::tensor);
    CHECK(h.q4->model()->tensors[h.q4->selection.index].name == "blk.1.attn_q.weight");
    CHECK(h.q4->focus_panel == "weights");
    h.frame();  // the table highlights the selected row
}

TEST_CASE("Model error can be cancelled and keeps the previous result", "[gui-model-error]") {
    ModelErrorHarness h;
    test::write_fixture_model(h.dir.file("big_f32.gguf"), model_tensors(GGML_TYPE_F32, true, 65536));
    test::write_fixture_model(h.dir.file("big_q4.gguf"), model_tensors(GGML_TYPE_Q4_0, false, 65536));
    Document& big_ref = h.workspace.open(h.dir.file("big_f32.gguf"));
    Document& big = h.open_ready(h.dir.file("big_q4.gguf"));
    PanelContext ctx = h.context_of(big);
    ModelErrorPanel panel;
    panel.set_reference(big_ref.id);
    // Every pool thread is held, so the comparison has not finished when it is cancelled.
    std::atomic<bool> release{false};
    for (size_t i = 0; i < h.jobs.threads(); ++i)
        h.jobs.start("hold", [&release](JobContext&) -> Status {
            while (!release) std::this_thread::yield();
            return ok_status();
        });
    panel.start(ctx);
    REQUIRE(panel.running());
    panel.cancel();
    release = true;
    h.jobs.wait_all();
    h.imgui.frame([&] { panel.draw(ctx); });
    CHECK_FALSE(panel.running());
    CHECK(panel.result() == nullptr);
}

TEST_CASE("Model error results go stale with another reference and are cleared when it closes", "[gui-model-error]") {
    ModelErrorHarness h;
    h.compare(*h.f32);
    CHECK_FALSE(h.panel.stale());
    h.panel.set_reference(h.copy->id);
    h.frame();
    CHECK(h.panel.stale());
    REQUIRE(h.panel.result());
    // Back to the reference the results belong to, then close it.
    h.panel.set_reference(h.f32->id);
    h.frame();
    CHECK_FALSE(h.panel.stale());
    h.workspace.close(h.f32->id);
    h.frame();
    CHECK(h.panel.result() == nullptr);
    CHECK(h.panel.reference() == h.copy->id);
    // A run whose reference closes before it is shown leaves no result.
    PanelContext ctx = h.context();
    h.panel.start(ctx);
    h.workspace.close(h.copy->id);
    h.jobs.wait_all();
    h.frame();
    CHECK_FALSE(h.panel.running());
    CHECK(h.panel.result() == nullptr);
    CHECK(h.panel.reference() == 0);
}

TEST_CASE("Model error compares with the file an error: link names", "[gui-model-error]") {
    ModelErrorHarness h;
    CHECK_FALSE(h.panel.accept_link("token:3", *h.q4));
    REQUIRE(h.panel.accept_link("error:copy.gguf", *h.q4));
    h.frame();
    CHECK(h.panel.reference() == h.copy->id);
    h.jobs.wait_all();
    h.frame();
    REQUIRE(h.panel.result());
    CHECK(h.panel.result()->reference_id == h.copy->id);
    // A name that is not open is dropped, and the comparison shown stays.
    REQUIRE(h.panel.accept_link("error:missing.gguf", *h.q4));
    h.frame();
    CHECK_FALSE(h.panel.running());
    CHECK(h.panel.reference() == h.copy->id);
}

TEST_CASE("Model error aligns a GGUF conversion with its Hugging Face checkpoint", "[gui-model-error]") {
    TempDir dir;
    const test::HfConversionFiles files = test::write_hf_conversion(dir.path());
    ModelErrorRun run;
    auto gguf = open_model(files.gguf);
    auto hf = open_model(files.safetensors);
    REQUIRE(gguf.ok());
    REQUIRE(hf.ok());
    run.reference = std::make_shared<const Model>(std::move(*hf));
    run.model = std::make_shared<const Model>(std::move(*gguf));
    Result<ModelErrorRun> measured = run_model_error(run, nullptr);
    REQUIRE(measured);
    run = std::move(measured).value();
    CHECK(run.name_alignment == "hf\xE2\x86\x92gguf llama");
    CHECK(run.compared == 5);  // Q and K (rows reordered), the norm and two experts of one stacked tensor
    CHECK(run.failed == 0);
    CHECK(run.only_reference == 1);
    CHECK(run.pooled_rmse == 0.0);
    CHECK(row_named(run, "model.layers.0.self_attn.q_proj.weight").name_b == "blk.0.attn_q.weight");
}
