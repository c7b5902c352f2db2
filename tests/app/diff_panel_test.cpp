// The Diff view: mlens diff between two open tabs — the same ModelDiff and recipe difference the
// command computes, the structural diff as soon as A is picked, values on demand as a job that
// can be cancelled, links that pick A, and the result cleared when A closes.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "build_paths.h"
#include "mlens/analysis/model_diff.h"
#include "mlens/analysis/quant_recipe.h"
#include "panels/diff_panel.h"
#include "state/model_diff_run.h"
#include "workspace_harness.h"

using namespace mlens;

namespace {

const std::string kF32 = std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf";
const std::string kQ4 = std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf";

struct DiffHarness : test::WorkspaceHarness {
    Document* f32 = nullptr;  // A
    Document* q4 = nullptr;  // B, the document the panel draws
    DiffPanel panel;

    DiffHarness() {
        std::vector<Document*> docs = open_all({kF32, kQ4});
        f32 = docs[0];
        q4 = docs[1];
    }
    void frame() {
        PanelContext ctx = context_of(*q4);
        imgui.window_frame("diff", 1366, 768, [&] { panel.draw(ctx); });
    }
    void settle() { frames_until_jobs_done(3, [&] { frame(); }); }
};

}  // namespace

TEST_CASE("run_model_diff answers what diff_models and the recipes answer", "[gui-diff]") {
    DiffHarness h;
    ModelDiffRun run;
    run.a = h.f32->model();
    run.b = h.q4->model();
    Result<ModelDiffRun> r = run_model_diff(run, nullptr);
    REQUIRE(r);
    Result<ModelDiff> direct = diff_models(*run.a, *run.b);
    REQUIRE(direct);
    REQUIRE(r->diff.tensors.size() == direct->tensors.size());
    REQUIRE_FALSE(r->diff.tensors.empty());
    for (size_t i = 0; i < direct->tensors.size(); ++i) {
        CHECK(r->diff.tensors[i].name_a == direct->tensors[i].name_a);
        CHECK(tensor_type_text(r->diff.tensors[i]) == tensor_type_text(direct->tensors[i]));
        CHECK_FALSE(r->diff.tensors[i].error);
    }
    CHECK(r->diff.metadata.size() == direct->metadata.size());
    const QuantRecipe qa = quant_recipe(*run.a), qb = quant_recipe(*run.b);
    CHECK(r->recipe_changes.size() == recipe_difference(qa, qb).size());
    CHECK(r->recipe_groups.size() == group_recipe_changes(recipe_difference(qa, qb)).size());
    CHECK(r->base_a == "F32");  // llama-quantize's F32 ftype makes the F32 demo
    CHECK(r->base_b == "Q4_0");
    CHECK(r->command_b == llama_quantize_command(qb));
    // The filter keeps rows whose A or B name holds the text, any case.
    const std::vector<size_t> attn = tensor_rows_matching(r->diff, "ATTN_Q");
    REQUIRE_FALSE(attn.empty());
    for (size_t i : attn) CHECK(r->diff.tensors[i].name_a.find("attn_q") != std::string::npos);
    CHECK(tensor_rows_matching(r->diff, "").size() == r->diff.tensors.size());
    CHECK(tensor_rows_matching(r->diff, "no such tensor").empty());
    // Same names on both sides: one name column. A renamed pair needs two.
    CHECK_FALSE(tensor_names_differ(r->diff));
    ModelDiff renamed;
    renamed.tensors.push_back({});
    renamed.tensors.back().name_a = "model.layers.0.self_attn.q_proj.weight";
    renamed.tensors.back().name_b = "blk.0.attn_q.weight";
    CHECK(tensor_names_differ(renamed));
}

TEST_CASE("the Diff panel diffs with the other tab at once and compares values on demand", "[gui-diff]") {
    DiffHarness h;
    h.settle();
    CHECK(h.panel.other() == h.f32->id);
    REQUIRE(h.panel.result());
    CHECK_FALSE(h.panel.result()->numeric);
    CHECK(h.panel.result()->other_id == h.f32->id);
    CHECK_FALSE(h.panel.result()->diff.tensors.empty());

    PanelContext ctx = h.context_of(*h.q4);
    h.panel.start(ctx, true);
    CHECK(h.panel.running());
    h.settle();
    REQUIRE(h.panel.result());
    const ModelDiffRun& r = *h.panel.result();
    CHECK(r.numeric);
    CHECK_FALSE(r.diff.layers.empty());
    size_t measured = 0;
    for (const TensorChange& c : r.diff.tensors) measured += c.error.has_value();
    CHECK(measured > 0);

    // Closing A clears the result.
    h.workspace.close(h.f32->id);
    h.frame();
    CHECK(h.panel.result() == nullptr);
    CHECK(h.panel.other() == 0);
}

TEST_CASE("a cancelled value comparison leaves the structural diff shown", "[gui-diff]") {
    DiffHarness h;
    h.settle();
    REQUIRE(h.panel.result());
    PanelContext ctx = h.context_of(*h.q4);
    // Every pool thread is held, so the comparison has not finished when it is cancelled.
    std::atomic<bool> release{false};
    for (size_t i = 0; i < h.jobs.threads(); ++i)
        h.jobs.start("hold", [&release](JobContext&) -> Status {
            while (!release) std::this_thread::yield();
            return ok_status();
        });
    h.panel.start(ctx, true);
    REQUIRE(h.panel.running());
    h.panel.cancel();
    release = true;
    h.settle();
    REQUIRE(h.panel.result());
    CHECK_FALSE(h.panel.result()->numeric);
}

TEST_CASE("diff links pick A by file name, and diff-values compares the values", "[gui-diff]") {
    DiffHarness h;
    CHECK_FALSE(h.panel.accept_link("error:tiny-llama-f32.gguf", *h.q4));
    REQUIRE(h.panel.accept_link("diff-values:tiny-llama-f32.gguf", *h.q4));
    h.settle();
    REQUIRE(h.panel.result());
    CHECK(h.panel.result()->other_id == h.f32->id);
    CHECK(h.panel.result()->numeric);
}
