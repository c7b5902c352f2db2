// Whether llama.cpp loads the file is computed once, with the document's index, and the panels
// that show it (Inspector, Diagnostics, the store's model table) draw it for every fixture cause.
#include <catch2/catch.hpp>

#include "build_paths.h"
#include "headless.h"
#include "loadability_fixtures.h"
#include "mlens/io/cache_database.h"
#include "mlens/analysis/loadability.h"
#include "panels/diagnostics_panel.h"
#include "panels/inspector_panel.h"
#include "panels/store_panel.h"
#include "state/store_document.h"
#include "workspace_harness.h"

using namespace mlens;

TEST_CASE("the Inspector and Diagnostics draw the loadability verdict of every fixture", "[app][loadability]") {
    test::WorkspaceHarness h;
    test::TempDir dir;
    for (const test::LoadFixture& f : test::load_fixtures(dir)) {
        INFO(f.name);
        Document& doc = h.open_ready(f.path);
        const Loadability& loads = doc.index()->loads;
        CHECK(std::string(load_verdict_name(loads.verdict)) == f.verdict);
        REQUIRE(loads.reasons.size() == f.reasons);
        CHECK(loads.reasons.front().text == f.text);
        DiagnosticsPanel diagnostics;
        InspectorPanel inspector;
        PanelContext ctx = h.context_of(doc);
        for (int i = 0; i < 2; ++i) {
            h.imgui.window_frame("diagnostics", 1366, 768, [&] { diagnostics.draw(ctx); });
            h.imgui.window_frame("inspector", 400, 768, [&] { inspector.draw(ctx); });
        }
    }
}

TEST_CASE("the store panel lists each model's loadability", "[app][loadability]") {
    const std::string root = std::string(MLENS_DEMO_DIR) + "/ollama-store";
    test::WorkspaceHarness h;
    Document& doc = h.open_ready(root);
    REQUIRE(doc.is_store());
    // The list reads no blob: a model's loadability is there at once only when the process's
    // cache holds it (an earlier opening's job stored it), else it comes with the verification
    // job the panel starts.
    std::vector<std::optional<Loadability>> before;
    for (const ModelListing& m : doc.store()->listing.models) before.push_back(m.loads);
    StorePanel panel;
    PanelContext ctx = h.context_of(doc);
    h.imgui.window_frame("store", 1366, 768, [&] { panel.draw(ctx); });
    h.jobs.wait_all();
    for (int i = 0; i < 2; ++i) h.imgui.window_frame("store", 1366, 768, [&] { panel.draw(ctx); });
    const StoreListing& l = doc.store()->listing;
    REQUIRE(l.models.size() == 6);
    REQUIRE(before.size() == 6);
    for (size_t i = 0; i < l.models.size(); ++i) {
        const ModelListing& m = l.models[i];
        INFO(m.ref.name.display());
        REQUIRE(m.loads);
        CHECK(m.loads->label() == (m.format == "gguf" ? "loads" : "no: not_gguf"));
        if (before[i]) CHECK(loadability_json(*before[i]) == loadability_json(*m.loads));
    }
    if (!CacheDatabase::shared()->enabled()) return;
    // The job stored every verdict: the store opened again shows each before its own job runs.
    auto store = Store::open(root);
    REQUIRE(store);
    auto second = open_store_document(*store);
    REQUIRE(second);
    REQUIRE(second->listing.models.size() == 6);
    for (size_t i = 0; i < l.models.size(); ++i) {
        INFO(l.models[i].ref.name.display());
        REQUIRE(second->listing.models[i].loads);
        CHECK(loadability_json(*second->listing.models[i].loads) == loadability_json(*l.models[i].loads));
    }
}
