#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include <ggml.h>
#include <imgui.h>

#include "gguf_builder.h"
#include "headless.h"
#include "mlens/analysis/weights_inspection.h"
#include "mlens/formats/ggml_types.h"
#include "model_fixture.h"
#include "panels/weights_panel.h"
#include "panels/weights_requant_view.h"
#include "state/paired_document.h"
#include "state/workspace.h"
#include "workspace_harness.h"

using namespace mlens;
using mlens::test::GgufBuilder;
using mlens::test::HeadlessImGui;
using mlens::test::TempDir;

namespace {

// F32 tensors:
//  - "wave.weight" ne [256, 2]: sin(i / 7) * 3 + i / 100, smooth and of mixed sign.
//  - "stack.weight" ne [32, 2, 2]: two stacked experts of two rows, (i - 64) / 8.
//  - "big.weight" ne [4096, 64]: the wave again, long enough that a run is still going when
//    it is cancelled.
void write_requant_file(const std::string& path) {
    auto wave = [](int i) { return static_cast<float>(std::sin(i / 7.0) * 3 + i / 100.0); };
    GgufBuilder b;
    b.bytes.reserve(4096 + (512 + 128 + 4096 * 64) * sizeof(float));
    b.header(3, 1);
    b.kv_string("general.architecture", "llama");
    b.tensor_info("wave.weight", {256, 2}, 0, 0);
    b.tensor_info("stack.weight", {32, 2, 2}, 0, 2048);
    b.tensor_info("big.weight", {4096, 64}, 0, 2560);
    b.pad_to(32);
    for (int i = 0; i < 512; ++i) b.f32(wave(i));
    for (int i = 0; i < 128; ++i) b.f32(static_cast<float>(i - 64) / 8);
    for (int i = 0; i < 4096 * 64; ++i) b.f32(wave(i % 5000));
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.bytes.data()), static_cast<std::streamsize>(b.bytes.size()));
}

uint32_t type_id(const char* name) {
    std::optional<uint32_t> id = ggml_type_from_name(name);
    REQUIRE(id);
    return *id;
}

struct RequantHarness : test::WorkspaceHarness {
    TempDir dir;
    Document* doc = nullptr;
    WeightsPanel panel;

    RequantHarness() {
        write_requant_file(dir.file("rq.gguf"));
        doc = &open_ready(dir.file("rq.gguf"));
    }
    PanelContext context() { return context_of(*doc); }
    void frame() {
        PanelContext ctx = context();
        imgui.window_frame("weights", 1600, 1000, [&] { panel.draw(ctx); });
    }
    void settle() {
        frames_until_jobs_done(4, [this] { frame(); });
    }
};

}  // namespace

TEST_CASE("requantize_weights gives one row per type in order, with the error of each", "[gui-requant]") {
    RequantHarness h;
    RequantRequest rq;
    rq.model = h.doc->model();
    rq.tensor = 0;
    rq.ggml_types = {type_id("Q8_0"), type_id("Q4_0"), type_id("IQ2_XXS"), type_id("Q4_K")};
    JobContext job;
    Result<RequantResult> run = requantize_weights(rq, &job);
    REQUIRE(run);
    const RequantResult& r = *run;
    CHECK(r.reference_type == "F32");
    REQUIRE(r.rows.size() == 4);
    CHECK(r.rows[0].type_name == "Q8_0");
    CHECK(r.rows[1].type_name == "Q4_0");
    CHECK(r.rows[2].type_name == "IQ2_XXS");
    CHECK(r.rows[3].type_name == "Q4_K");
    CHECK(r.rows[0].bits_per_weight == 8.5);
    CHECK(r.rows[1].bits_per_weight == 4.5);
    CHECK(r.rows[3].bits_per_weight == 4.5);
    CHECK(r.rows[0].error.count == 512);
    CHECK(r.rows[0].error.rmse > 0);
    CHECK(r.rows[0].error.rmse < r.rows[1].error.rmse);
    CHECK(r.rows[0].error.cosine > r.rows[1].error.cosine);
    CHECK(r.rows[2].needs_imatrix);
    CHECK(r.rows[3].skipped.empty());
    CHECK_FALSE(r.rows[3].needs_imatrix);

    // One expert: rows of 32 values, which no K-quant block divides.
    rq.tensor = 1;
    rq.expert = 1;
    Result<RequantResult> expert_run = requantize_weights(rq, nullptr);
    REQUIRE(expert_run);
    const RequantResult& expert = *expert_run;
    REQUIRE(expert.rows.size() == 4);
    CHECK(expert.rows[0].error.count == 64);
    CHECK(expert.rows[3].skipped.find("blocks of 256") != std::string::npos);

    rq.expert = 2;
    Result<RequantResult> bad = requantize_weights(rq, nullptr);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::E_RANGE);

    rq.expert.reset();
    job.cancel();
    Result<RequantResult> cancelled = requantize_weights(rq, &job);
    REQUIRE_FALSE(cancelled);
    CHECK(is_cancelled(cancelled.error()));
}

TEST_CASE("the Requantize tab runs the checked types, draws and sorts the table, and clears on a new tensor", "[gui-requant]") {
    RequantHarness h;
    h.doc->select({SelectionKind::tensor, 0});
    h.settle();
    REQUIRE(h.panel.result() != nullptr);
    WeightsRequantView& view = h.panel.requant_view();
    CHECK(view.result() == nullptr);

    h.panel.show_requant();
    view.check_only({"Q8_0", "Q4_0", "IQ2_XXS"});
    h.frame();
    CHECK(view.drawn_rows().empty());
    PanelContext ctx = h.context();
    view.run(ctx);
    CHECK(view.running());
    h.settle();
    CHECK_FALSE(view.running());
    REQUIRE(view.result() != nullptr);
    const RequantResult& r = *view.result();
    REQUIRE(r.rows.size() == 3);
    // In the order the types are offered: legacy types first, i-quants after.
    CHECK(r.rows[0].type_name == "Q4_0");
    CHECK(r.rows[1].type_name == "Q8_0");
    CHECK(r.rows[2].type_name == "IQ2_XXS");
    CHECK(r.rows[1].error.rmse < r.rows[0].error.rmse);
    CHECK(r.rows[2].needs_imatrix);
    CHECK(view.drawn_rows() == std::vector<std::string>{"Q4_0", "Q8_0", "IQ2_XXS"});

    // Another expert or tensor: the numbers are gone, not shown under the new name.
    view.follow(0, 1, "wave.weight expert 1", 256, 0);
    CHECK(view.result() == nullptr);
    view.follow(0, std::nullopt, "wave.weight", 256, 0);
    view.run(ctx);
    h.settle();
    REQUIRE(view.result() != nullptr);
    h.doc->select({SelectionKind::tensor, 1});
    h.frame();
    CHECK(view.result() == nullptr);
    CHECK_FALSE(view.running());
    h.settle();
    CHECK(view.drawn_rows().empty());
}

TEST_CASE("the Requantize table's columns, every offered type run, fit the room a 1366-px window gives it", "[gui-requant]") {
    RequantHarness h;
    h.doc->select({SelectionKind::tensor, 0});
    h.settle();
    WeightsRequantView& view = h.panel.requant_view();
    h.panel.show_requant();
    std::vector<std::string> all;
    for (const WeightsRequantView::OfferedType& t : view.offered()) all.push_back(t.name);
    view.check_only(all);
    PanelContext ctx = h.context();
    view.run(ctx);
    h.settle();
    REQUIRE(view.result() != nullptr);
    REQUIRE(view.drawn_rows().size() == all.size());
    // The Weights panel's lower right half is 441 pixels wide at 1366 px, 427 beside its scrollbar.
    CHECK(view.drawn_columns_width() > 0.0f);
    CHECK(view.drawn_columns_width() <= 427.0f);
}

TEST_CASE("a running requantization can be cancelled and is cancelled by a tensor change", "[gui-requant]") {
    RequantHarness h;
    h.doc->select({SelectionKind::tensor, 2});
    h.settle();
    WeightsRequantView& view = h.panel.requant_view();
    for (auto& t : view.offered()) t.checked = true;
    PanelContext ctx = h.context();

    view.run(ctx);
    REQUIRE(view.running());
    for (const JobPtr& job : h.jobs.jobs())
        if (job->name().starts_with("requantize")) job->cancel();
    h.jobs.wait_all();
    h.frame();
    CHECK_FALSE(view.running());
    CHECK(view.result() == nullptr);

    // A tensor change cancels the run it leaves behind.
    view.run(ctx);
    REQUIRE(view.running());
    std::vector<JobPtr> running = h.jobs.jobs();
    h.doc->select({SelectionKind::tensor, 0});
    h.frame();
    CHECK_FALSE(view.running());
    h.jobs.wait_all();
    for (const JobPtr& job : running)
        if (job->name().starts_with("requantize")) CHECK(job->cancelled());
    h.settle();
    CHECK(view.result() == nullptr);
}

TEST_CASE("with no file chosen to compare with, the Requantize tab measures against an open float twin", "[gui-requant]") {
    test::WorkspaceHarness h;
    TempDir dir;
    const std::vector<float> values = test::test_signal(256 * 4, 3);
    // Opened first: the same name in F32 but another shape, which is no twin.
    test::write_fixture_model(dir.file("wide.gguf"), {{"blk.0.attn_q.weight", GGML_TYPE_F32, {512, 2}, values}});
    test::write_fixture_model(dir.file("q4.gguf"), {{"blk.0.attn_q.weight", GGML_TYPE_Q4_0, {256, 4}, values}});
    test::write_fixture_model(dir.file("f32.gguf"), {{"blk.0.attn_q.weight", GGML_TYPE_F32, {256, 4}, values}});
    std::vector<Document*> docs = h.open_all({dir.file("wide.gguf"), dir.file("q4.gguf"), dir.file("f32.gguf")});
    Document& q4 = *docs[1];
    CHECK(float_twin_document(h.workspace, q4, 0) == docs[2]->id);
    CHECK(float_twin_document(h.workspace, *docs[2], 0) == 0);  // F32 has no more precise twin here
    CHECK(float_twin_document(h.workspace, *docs[0], 0) == 0);

    WeightsPanel panel;
    q4.select({SelectionKind::tensor, 0});
    PanelContext ctx = h.context_of(q4);
    auto settle = [&] {
        for (int i = 0; i < 5; ++i) {
            h.imgui.window_frame("center", 1366, 768, [&] { panel.draw(ctx); });
            h.jobs.wait_all();
            h.workspace.poll();
        }
    };
    settle();
    WeightsRequantView& view = panel.requant_view();
    view.check_only({"Q4_0", "Q8_0"});
    view.run(ctx);
    settle();
    INFO(view.error_text());
    REQUIRE(view.result() != nullptr);
    const RequantResult& twin = *view.result();
    CHECK(twin.reference == "blk.0.attn_q.weight (F32) of the compared file");
    CHECK(twin.note.empty());
    REQUIRE(twin.rows.size() == 2);
    CHECK(twin.rows[0].error.rmse > 0);
    CHECK_FALSE(twin.rows[0].equals_reference());
    CHECK_FALSE(twin.rows[1].equals_reference());

    // The tensor itself as the reference: its own type holds it exactly, and the row says so.
    RequantRequest alone;
    alone.model = q4.model();
    alone.tensor = 0;
    alone.ggml_types = {type_id("Q4_0"), type_id("Q8_0")};
    Result<RequantResult> self = requantize_weights(alone, nullptr);
    REQUIRE(self.ok());
    CHECK(self->rows[0].equals_reference());
    CHECK(self->rows[0].error.rmse == 0);
    CHECK_FALSE(self->rows[1].equals_reference());
}
