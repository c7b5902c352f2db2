#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <utility>

#include <imgui.h>

#include "gguf_builder.h"
#include "headless.h"
#include "panels/weights_panel.h"
#include "weights_analysis.h"
#include "workspace.h"

using namespace mlens;
using mlens::test::GgufBuilder;
using mlens::test::HeadlessImGui;
using mlens::test::TempDir;

namespace {

// Two F32 tensors: "experts.weight" ne [4, 3, 2] holding 0..23 (two stacked experts of 3 rows),
// and "plain.weight" ne [8, 2] holding (i - 7.5) / 2 (+ delta_i in the candidate file, where
// delta_i is -0.25 for even i and +0.5 for odd i).
void write_weights_file(const std::string& path, bool candidate) {
    GgufBuilder b;
    b.header(2, 1);
    b.kv_string("general.architecture", "llama");
    b.tensor_info("experts.weight", {4, 3, 2}, 0, 0);
    b.tensor_info("plain.weight", {8, 2}, 0, 96);
    b.pad_to(32);
    b.f32_run(24);
    for (int i = 0; i < 16; ++i) {
        float v = (static_cast<float>(i) - 7.5f) / 2;
        if (candidate) v += i % 2 ? 0.5f : -0.25f;
        b.f32(v);
    }
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.bytes.data()), static_cast<std::streamsize>(b.bytes.size()));
}

struct WeightsHarness {
    TempDir dir;
    HeadlessImGui imgui;
    Settings settings;
    JobRunner jobs;
    Workspace workspace{jobs, settings};
    Document* a = nullptr;
    Document* b = nullptr;
    WeightsPanel panel;

    WeightsHarness() {
        write_weights_file(dir.file("a.gguf"), false);
        write_weights_file(dir.file("b.gguf"), true);
        a = &workspace.open(dir.file("a.gguf"));
        b = &workspace.open(dir.file("b.gguf"));
        jobs.wait_all();
        workspace.poll();
        REQUIRE(a->ready());
        REQUIRE(b->ready());
    }
    void frame() {
        PanelContext ctx{*a, jobs, imgui.fonts(), &workspace};
        imgui.frame([&] {
            ImGui::SetNextWindowPos(ImVec2(0, 0));
            ImGui::SetNextWindowSize(ImVec2(1400, 900));
            ImGui::Begin("weights");
            panel.draw(ctx);
            ImGui::End();
            panel.draw_windows(ctx);
        });
    }
    // Frames until the job the panel started has finished and its result is shown.
    // (A toolbar change made during a frame starts its job on the next one, so a few rounds.)
    void settle() {
        for (int i = 0; i < 4; ++i) {
            frame();
            jobs.wait_all();
        }
        frame();
        REQUIRE_FALSE(panel.running());
        REQUIRE(panel.result() != nullptr);
    }
};

}  // namespace

TEST_CASE("analyze_weights computes stats, histogram and first values of one expert", "[gui-weights]") {
    WeightsHarness h;
    CHECK(expert_count(*h.a->model, 0) == 2u);
    CHECK_FALSE(expert_count(*h.a->model, 1).has_value());

    WeightsRequest rq;
    rq.model = h.a->model;
    rq.tensor = 0;
    rq.expert = 1;
    rq.bins = 4;
    WeightsResult r;
    JobContext job;
    analyze_weights(rq, r, &job);
    REQUIRE(r.error.empty());
    CHECK(r.stage == kWeightsStages);
    REQUIRE(r.stats);
    CHECK(r.stats->count == 12);
    CHECK(r.stats->min == 12);
    CHECK(r.stats->max == 23);
    CHECK(r.stats->mean == Approx(17.5));
    CHECK(r.elements == 12);
    CHECK(r.row_length == 4);
    CHECK(r.histogram.lo == 12);
    CHECK(r.histogram.hi == 23);
    CHECK(r.histogram.counts == std::vector<uint64_t>{3, 3, 3, 3});
    REQUIRE(r.first_values.size() == 3);
    CHECK(r.first_values[0] == std::vector<float>{12, 13, 14, 15});
    CHECK(r.first_values[2] == std::vector<float>{20, 21, 22, 23});

    rq.expert = 2;
    WeightsResult bad;
    analyze_weights(rq, bad, &job);
    CHECK(bad.error.find("E_RANGE") != std::string::npos);
}

TEST_CASE("analyze_weights compares with the same-named tensor of another model", "[gui-weights]") {
    WeightsHarness h;
    WeightsRequest rq;
    rq.model = h.a->model;
    rq.tensor = 1;
    rq.bins = 8;
    rq.columns = 3;
    rq.other = h.b->model;
    WeightsResult r;
    analyze_weights(rq, r, nullptr);
    REQUIRE(r.error.empty());
    REQUIRE(r.compare_error.empty());
    REQUIRE(r.compared);
    CHECK(r.stats->mean == 0);
    CHECK(r.histogram.counts == std::vector<uint64_t>{2, 2, 2, 2, 2, 2, 2, 2});
    CHECK(r.first_values == std::vector<std::vector<float>>{{-3.75f, -3.25f, -2.75f}, {0.25f, 0.75f, 1.25f}});
    // a - b is +0.25 for even i and -0.5 for odd i.
    CHECK(r.comparison.count == 16);
    CHECK(r.comparison.rmse == Approx(std::sqrt(0.15625)));
    CHECK(r.comparison.max_abs == 0.5);
    CHECK(r.comparison.mean_abs == Approx(0.375));
    CHECK(r.error_histogram.lo == -0.5);
    CHECK(r.error_histogram.hi == 0.25);
    CHECK(r.error_histogram.counts == std::vector<uint64_t>{8, 0, 0, 0, 0, 0, 0, 8});
    // The other tensor is binned over this one's range; its values reach beyond it.
    CHECK(r.other_histogram.lo == r.histogram.lo);
    CHECK(r.other_histogram.counts.size() == 8);
    CHECK(r.other_histogram.total() == 16);
    CHECK(r.other_histogram.above == 1);

    std::string csv = histogram_csv({{"values", &r.histogram}, {"difference", &r.error_histogram}});
    CHECK(csv.rfind("series,bin,lo,hi,count\nvalues,0,-3.75,-2.8125,2\n", 0) == 0);
    CHECK(csv.find("difference,7,0.15625,0.25,8\n") != std::string::npos);
}

TEST_CASE("the Weights panel follows the selection, re-bins on zoom and compares documents", "[gui-weights]") {
    WeightsHarness h;
    h.frame();
    CHECK(h.panel.result() == nullptr);

    h.a->select({SelectionKind::tensor, 1});
    h.panel.set_bins(8);
    h.settle();
    CHECK(h.panel.result()->histogram.counts == std::vector<uint64_t>{2, 2, 2, 2, 2, 2, 2, 2});
    CHECK_FALSE(h.panel.result()->compared);

    // Dragging over [0, 2] on the plot re-bins that range with the same bin count and keeps the
    // statistics of the whole tensor.
    HistogramPlot& plot = h.panel.plot();
    float from = std::floor(plot.x_of(0.0)), to = std::floor(plot.x_of(2.0));
    double lo = plot.value_at(from), hi = plot.value_at(to);
    float y = (plot.plot_min().y + plot.plot_max().y) / 2;
    ImGuiIO& io = ImGui::GetIO();
    for (auto [x, down] : {std::pair{from, false}, std::pair{from, true}, std::pair{to, true}, std::pair{to, false}}) {
        io.MousePos = ImVec2(x, y);
        io.MouseDown[0] = down;
        h.frame();
    }
    io.MousePos = ImVec2(-1000, -1000);
    h.settle();
    const WeightsResult* zoomed = h.panel.result();
    CHECK(zoomed->histogram.lo == Approx(lo));
    CHECK(zoomed->histogram.hi == Approx(hi));
    CHECK(zoomed->histogram.counts.size() == 8);
    CHECK(zoomed->histogram.total() == 16);
    CHECK(zoomed->stats->min == -3.75);

    h.panel.compare_with(h.b->id);
    h.settle();
    const WeightsResult* r = h.panel.result();
    REQUIRE(r->compared);
    CHECK(r->comparison.max_abs == 0.5);
    CHECK(r->other_histogram.lo == Approx(lo));
    h.panel.show_error_histogram(true);
    h.frame();
    h.frame();

    // Selecting the stacked tensor starts over with all experts.
    h.a->select({SelectionKind::tensor, 0});
    h.settle();
    CHECK(h.panel.result()->elements == 24);
    CHECK(h.panel.result()->stats->max == 23);

    // Cancelling a running job keeps the last result.
    h.a->select({SelectionKind::tensor, 1});
    h.frame();
    REQUIRE(h.panel.running());
    h.jobs.jobs().front()->cancel();
    h.jobs.wait_all();
    h.frame();
    CHECK_FALSE(h.panel.running());
}
