// An importance matrix as a document (its panel alone, its summaries, GGUF and legacy), and the
// Requantize tab using an open one and the compared document as the reference.
#include <catch2/catch.hpp>

#include <ggml.h>

#include "headless.h"
#include "imatrix_fixture.h"
#include "model_fixture.h"
#include "panels/imatrix_panel.h"
#include "panels/weights_panel.h"
#include "workspace_harness.h"

using namespace mlens;

namespace {

// "exps": 2 experts × 2 rows of 256 values; expert 1 saw no token.
test::ImatrixFixtureEntry exps_entry() {
    test::ImatrixFixtureEntry e{"exps", 256, {12, 0}, {}};
    for (int x = 0; x < 2; ++x)
        for (int c = 0; c < 256; ++c) e.sums.push_back(x == 0 ? static_cast<float>((c * 13) % 50 + (c % 16 == 0 ? 400 : 0)) : 0.0f);
    return e;
}

struct ImatrixHarness : test::WorkspaceHarness {
    test::TempDir dir;
    ImatrixHarness() {
        test::write_whole_file(dir.file("im.gguf"), test::gguf_imatrix_bytes({exps_entry()}, {"calibration.txt"}, 3, 128));
        test::write_whole_file(dir.file("im.dat"), test::legacy_imatrix_bytes({exps_entry()}, 3, "calibration.txt"));
        const std::vector<float> values = test::test_signal(256 * 4, 5);
        test::write_fixture_model(dir.file("f32.gguf"), {{"exps", GGML_TYPE_F32, {256, 2, 2}, values}});
        test::write_fixture_model(dir.file("q4.gguf"), {{"exps", GGML_TYPE_Q4_0, {256, 2, 2}, values}});
    }
    void settle(const std::function<void()>& draw) {
        for (int i = 0; i < 5; ++i) {
            imgui.window_frame("center", 1366, 768, draw);
            jobs.wait_all();
            workspace.poll();
        }
    }
};

}  // namespace

TEST_CASE("an imatrix opens as a document with its own panel and summaries", "[gui-imatrix]") {
    ImatrixHarness h;
    auto docs = h.open_all({h.dir.file("im.gguf"), h.dir.file("im.dat")});
    for (Document* doc : docs) {
        REQUIRE(doc->is_imatrix());
        CHECK(doc->title.starts_with("imatrix \xC2\xB7 im."));
        std::vector<std::string> shown;
        for (const PanelInfo& p : panel_registry())
            if (panel_shows(p, *doc)) shown.push_back(p.id);
        CHECK(shown == std::vector<std::string>{"imatrix"});
        ImatrixPanel panel;
        PanelContext ctx = h.context_of(*doc);
        h.settle([&] { panel.draw(ctx); });
        REQUIRE(panel.summaries() != nullptr);
        REQUIRE(panel.summaries()->entries.size() == 1);
        const ImatrixEntrySummary& s = panel.summaries()->entries[0];
        CHECK(s.experts.size() == (doc->imatrix()->format == ImatrixFormat::gguf ? 2u : 1u));
        CHECK(s.inactive_experts == (doc->imatrix()->format == ImatrixFormat::gguf ? 1u : 0u));
        CHECK(panel.badge(*doc) == "1");
        // llama-imatrix's statistics, over the experts that saw tokens, on their own tab.
        const ImatrixStatistics& st = panel.summaries()->statistics;
        REQUIRE(st.tensors.size() == 1);
        CHECK(st.tensors[0].tensor == doc->imatrix()->entries[0].name);
        CHECK(st.tensors[0].elements == static_cast<int32_t>(doc->imatrix()->entries[0].columns));
        CHECK(panel.accept_link("imatrix:statistics", *doc));
        h.settle([&] { panel.draw(ctx); });
    }
}

TEST_CASE("the Requantize tab quantizes with an open imatrix and against the compared document", "[gui-imatrix][gui-requant]") {
    ImatrixHarness h;
    auto docs = h.open_all({h.dir.file("q4.gguf"), h.dir.file("f32.gguf"), h.dir.file("im.gguf")});
    Document& q4 = *docs[0];
    WeightsPanel panel;
    q4.select({SelectionKind::tensor, 0});
    panel.compare_with(docs[1]->id);
    PanelContext ctx = h.context_of(q4);
    h.settle([&] { panel.draw(ctx); });
    WeightsRequantView& view = panel.requant_view();
    // The open imatrix is picked, and the defaults for rows of 256 with one include IQ2_XXS.
    CHECK(view.imatrix_document() == docs[2]->id);
    std::vector<std::string> checked;
    for (const auto& t : view.offered())
        if (t.checked) checked.push_back(t.name);
    CHECK(checked == std::vector<std::string>{"Q4_0", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ2_XXS", "IQ4_NL", "IQ4_XS"});
    view.check_only({"IQ2_XXS"});
    view.run(ctx);
    h.settle([&] { panel.draw(ctx); });
    INFO(view.error_text());
    REQUIRE(view.result() != nullptr);
    const RequantResult& r = *view.result();
    REQUIRE(r.rows.size() == 1);
    CHECK(r.reference == "exps (F32) of the compared file");
    CHECK(r.note.empty());
    CHECK(r.imatrix_entry == "exps");
    CHECK(r.rows[0].with_importance);
    CHECK(r.rows[0].error.rmse > 0);

    // Without the imatrix and the compared file: IQ2_XXS needs one, and the open F32 twin is the
    // reference all the same (picked: same tensor name and shape).
    view.use_imatrix(0);
    panel.compare_with(0);
    h.settle([&] { panel.draw(ctx); });
    view.run(ctx);
    h.settle([&] { panel.draw(ctx); });
    REQUIRE(view.result() != nullptr);
    CHECK(view.result()->rows[0].needs_imatrix);
    CHECK(view.result()->reference == "exps (F32) of the compared file");
    CHECK(view.result()->note.empty());
}
