// The store panel's Export… window, headless: the planned files shown before anything is
// written, the export as a job, the verification and README shown after, cancel leaving nothing,
// and the written folder opening as a document.
#include <catch2/catch.hpp>

#include <filesystem>

#include "build_paths.h"
#include "panels/store_panel.h"
#include "mlens/text/readable_text.h"
#include "state/output_folder.h"
#include "workspace_harness.h"

using namespace mlens;
using mlens::test::TempDir;

namespace fs = std::filesystem;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

struct ExportHarness : test::WorkspaceHarness {
    Document* doc = nullptr;
    StorePanel panel;

    explicit ExportHarness(const std::string& model) {
        doc = &open_ready(kDemoStore);
        REQUIRE(panel.accept_link(model, *doc));
        frames();
    }
    void frames(int n = 2) {
        for (int i = 0; i < n; ++i) {
            PanelContext ctx = context_of(*doc);
            imgui.window_frame(
                "panel", 1400, 900, [&] { panel.draw(ctx); }, [&] { panel.draw_windows(ctx); });
        }
    }
    void settle() {
        jobs.wait_all();
        frames();
    }
    const ModelListing& listing() { return doc->store()->listing.models[*panel.shown_model()]; }
};

}  // namespace

TEST_CASE("the store panel's Export window plans, writes and verifies an hf export", "[gui-store][store_export]") {
    ExportHarness h("tiny-moe:int4");
    StoreExportWindow& w = h.panel.export_window();
    CHECK_FALSE(w.is_open());
    PanelContext ctx = h.context_of(*h.doc);
    w.open(ctx, h.doc->store()->store, h.listing().ref.name, export_formats_of(h.listing().format));
    h.settle();
    REQUIRE(w.is_open());
    REQUIRE(w.prepared());
    const StoreExportPlan& plan = w.prepared()->plan;
    CHECK(plan.format == ExportFormat::hf);
    CHECK(plan.files.size() == 4);
    CHECK(w.out_dir() == (fs::path(default_output_folder()) / "tiny-moe-int4-hf").string());

    TempDir dir;
    w.set_out_dir(dir.file("hf"));
    w.start_export(ctx);
    CHECK(w.busy());
    h.settle();
    REQUIRE(w.outcome());
    INFO((w.outcome()->ok() ? std::string() : w.outcome()->error().to_string()));
    REQUIRE(w.outcome()->ok());
    CHECK((*w.outcome())->verification.failures == 0);
    CHECK((*w.outcome())->verification.tensors_checked == 14);
    for (const ExportFile& f : plan.files) CHECK(fs::file_size(dir.file("hf/" + f.name)) == f.bytes);

    // The result opens as a safetensors folder document.
    Document& result = h.workspace.open(dir.file("hf"));
    h.jobs.wait_all();
    h.workspace.poll();
    CHECK(result.ready());

    // Another format plans again; mlx of the same model.
    w.choose(ctx, ExportFormat::mlx);
    h.settle();
    REQUIRE(w.prepared());
    CHECK(w.prepared()->plan.format == ExportFormat::mlx);
    CHECK(w.out_dir() == (fs::path(default_output_folder()) / "tiny-moe-int4-mlx").string());
}

TEST_CASE("the Export window of a GGUF store model; a cancelled export leaves nothing", "[gui-store][store_export]") {
    ExportHarness h("tiny-llama:q4_0");
    StoreExportWindow& w = h.panel.export_window();
    PanelContext ctx = h.context_of(*h.doc);
    w.open(ctx, h.doc->store()->store, h.listing().ref.name, export_formats_of(h.listing().format));
    h.settle();
    REQUIRE(w.prepared());
    std::vector<std::string> names;
    for (const ExportFile& f : w.prepared()->plan.files) names.push_back(f.name);
    CHECK(names == std::vector<std::string>{"model.gguf", "Modelfile", "README.md"});

    TempDir dir;
    w.set_out_dir(dir.file("bundle"));
    w.start_export(ctx);
    // Cancel at once: whatever was written is removed, nothing appears under the final name.
    for (const JobPtr& job : h.jobs.jobs()) job->cancel();
    h.settle();
    REQUIRE(w.outcome());
    if (!w.outcome()->ok() && is_cancelled(w.outcome()->error())) {
        CHECK_FALSE(fs::exists(dir.file("bundle")));
        CHECK(fs::is_empty(dir.path()));
    } else {
        // The export may finish before the cancel is seen; then it is complete.
        REQUIRE(w.outcome()->ok());
        CHECK(fs::file_size(dir.file("bundle/model.gguf")) == w.prepared()->plan.files[0].bytes);
    }
    w.set_out_dir(dir.file("bundle2"));
    w.start_export(ctx);
    h.settle();
    REQUIRE(w.outcome());
    REQUIRE(w.outcome()->ok());
    CHECK(fs::exists(dir.file("bundle2/Modelfile")));
}

TEST_CASE("the Export window shows the README it will write as text, and an export link opens it", "[gui-store][store_export]") {
    ExportHarness h("export:tiny-llama:q4_0");
    StoreExportWindow& w = h.panel.export_window();
    h.settle();
    REQUIRE(w.is_open());
    REQUIRE(w.prepared());
    // The README is shown before anything is written, with its line breaks as line breaks.
    const std::string& readme = w.readme();
    REQUIRE_FALSE(readme.empty());
    CHECK(readme.find('\n') != std::string::npos);
    CHECK(readme.find("\\x0A") == std::string::npos);
    for (const ExportFile& f : w.prepared()->plan.files)
        if (f.name == "README.md") CHECK(readme == readable_text(f.text, 1u << 20));
}
