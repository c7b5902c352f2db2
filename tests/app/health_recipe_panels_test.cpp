// The Health panel scans on its first draw, as a job, and keeps the report; a finding's click
// selects its bytes. The Recipe panel shows the same recipe as `mlens recipe`.
#include <catch2/catch.hpp>

#include <ggml.h>

#include <imgui.h>

#include "headless.h"
#include "mlens/analysis/quant_recipe.h"
#include "model_fixture.h"
#include "panels/health_panel.h"
#include "panels/recipe_panel.h"
#include "workspace_harness.h"

using namespace mlens;
using mlens::test::FixtureTensor;
using mlens::test::TempDir;
using mlens::test::test_signal;

namespace {

// Q8_0 weights, an F32 norm holding 1e6 and an all-zero F32 row.
std::vector<FixtureTensor> tensors() {
    std::vector<float> norm = test_signal(64, 3), rows = test_signal(64 * 4, 4);
    norm[7] = 1e6f;
    std::fill(rows.begin() + 64, rows.begin() + 128, 0.0f);
    return {{"blk.0.attn_q.weight", GGML_TYPE_Q8_0, {64, 4}, test_signal(64 * 4, 1)},
            {"blk.0.attn_norm.weight", GGML_TYPE_F32, {64}, norm},
            {"blk.0.ffn_up.weight", GGML_TYPE_F32, {64, 4}, rows}};
}

Document& open_fixture(test::WorkspaceHarness& h, const TempDir& dir) {
    test::write_fixture_model(dir.file("m.gguf"), tensors());
    return h.open_ready(dir.file("m.gguf"));
}

// A workspace with the fixture model open and ready.
struct OpenFixture {
    test::WorkspaceHarness h;
    TempDir dir;
    Document& doc = open_fixture(h, dir);
};

}  // namespace

TEST_CASE_METHOD(OpenFixture, "the Health panel scans as a job and keeps its findings", "[app][health]") {
    HealthPanel panel;
    PanelContext ctx = h.context_of(doc);
    h.imgui.window_frame("health", 1400, 900, [&] { panel.draw(ctx); });
    CHECK((panel.running() || panel.report()));
    h.jobs.wait_all();
    for (int i = 0; i < 3; ++i) h.imgui.window_frame("health", 1400, 900, [&] { panel.draw(ctx); });
    REQUIRE(panel.report() != nullptr);
    CHECK_FALSE(panel.running());
    const FsckReport& r = *panel.report();
    REQUIRE(r.findings.size() == 2);
    CHECK(r.findings[0].code == ErrorCode::F_BEYOND_F16);
    CHECK(r.findings[1].code == ErrorCode::F_ZERO_ROWS);
    CHECK(panel.badge(doc) == "2");
    // The status bar's counts: two warnings, no error, every tensor scanned.
    REQUIRE(doc.value_scan.has_value());
    CHECK(doc.value_scan->errors == 0);
    CHECK(doc.value_scan->warnings == 2);
    CHECK(doc.value_scan->notes == 0);
    CHECK(doc.value_scan->tensors_scanned == r.tensors);
    CHECK(doc.value_scan->tensors == r.tensors);
    // The report stays while the panel lives: more frames start no new scan.
    h.imgui.window_frame("health", 1400, 900, [&] { panel.draw(ctx); });
    CHECK(panel.report() == &r);
    CHECK_FALSE(panel.running());
}

TEST_CASE_METHOD(OpenFixture, "the Recipe panel shows the recipe of its document", "[app][recipe]") {
    RecipePanel panel;
    PanelContext ctx = h.context_of(doc);
    for (int i = 0; i < 2; ++i) h.imgui.window_frame("recipe", 1400, 900, [&] { panel.draw(ctx); });
    REQUIRE(panel.recipe() != nullptr);
    const QuantRecipe want = quant_recipe(*doc.model());
    CHECK(panel.recipe()->base == "Q8_0");
    CHECK(panel.recipe()->kinds == want.kinds);
    CHECK(panel.recipe()->rules == want.rules);
}

TEST_CASE("the Recipe heat map shades bits per weight on one ramp, deeper with more bits", "[app][recipe]") {
    CHECK(bpw_ramp_position(1.0) == 0.0);
    CHECK(bpw_ramp_position(0.5) == 0.0);
    CHECK(bpw_ramp_position(32.0) == 1.0);
    CHECK(bpw_ramp_position(64.0) == 1.0);
    double previous = -1;
    for (double bpw : {2.0, 3.0, 4.5, 5.5, 6.5625, 8.5, 16.0, 32.0}) {
        CHECK(bpw_ramp_position(bpw) > previous);
        previous = bpw_ramp_position(bpw);
    }
}
