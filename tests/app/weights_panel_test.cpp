#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ggml.h>
#include <imgui.h>

#include "gguf_builder.h"
#include "gui_fixture.h"
#include "headless.h"
#include "hf_conversion_fixture.h"
#include "mlens/analysis/weights_inspection.h"
#include "mlens/formats/ggml_types.h"
#include "mlens/open/target.h"
#include "model_fixture.h"
#include "panels/weights_panel.h"
#include "state/workspace.h"
#include "workspace_harness.h"

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

// Quantized tensors with block scales chosen by hand (fp16 bit patterns), and one F32 tensor:
//  - "q8.weight" Q8_0 ne [64, 3, 2] (two stacked experts, 384 values = 12 blocks); block b has
//    d = {0, 0.5, 1, 2}[b % 4] and quants b - 16 + i.
//  - "q4k.weight" Q4_K ne [512] (two super-blocks): d = 1, dmin = 0.5, the first sub-block's
//    6-bit scale 5 and min 3, the other sub-blocks 0.
//  - "f32.weight" F32 ne [32].
void write_quantized_file(const std::string& path) {
    const uint16_t q8_d[] = {0x0000, 0x3800, 0x3C00, 0x4000};
    GgufBuilder b;
    b.header(3, 1);
    b.kv_string("general.architecture", "llama");
    b.tensor_info("q8.weight", {64, 3, 2}, 8, 0);
    b.tensor_info("q4k.weight", {512}, 12, 416);
    b.tensor_info("f32.weight", {32}, 0, 704);
    b.pad_to(32);
    for (int block = 0; block < 12; ++block) {
        b.u16(q8_d[block % 4]);
        for (int i = 0; i < 32; ++i) b.u8(static_cast<uint8_t>(block - 16 + i));
    }
    b.pad_to(32);
    for (int super_block = 0; super_block < 2; ++super_block) {
        b.u16(0x3C00).u16(0x3800);
        b.u8(5).zeros(3).u8(3).zeros(7);
        b.zeros(128);
    }
    b.pad_to(32);
    b.f32_run(32);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.bytes.data()), static_cast<std::streamsize>(b.bytes.size()));
}

const SeriesSummary* scale_series(const WeightsResult& r, const std::string& name) {
    if (!r.scales) return nullptr;
    for (const SeriesSummary& s : r.scales->series)
        if (s.name == name) return &s;
    return nullptr;
}

struct WeightsHarness : test::WorkspaceHarness {
    TempDir dir;
    Document* a = nullptr;
    Document* b = nullptr;
    Document* q = nullptr;  // write_quantized_file
    Document* shown = nullptr;  // the document the panel draws, `a` unless told
    WeightsPanel panel;

    WeightsHarness() {
        write_weights_file(dir.file("a.gguf"), false);
        write_weights_file(dir.file("b.gguf"), true);
        write_quantized_file(dir.file("q.gguf"));
        std::vector<Document*> docs = open_all({dir.file("a.gguf"), dir.file("b.gguf"), dir.file("q.gguf")});
        a = docs[0];
        b = docs[1];
        q = docs[2];
        shown = a;
    }
    void frame() {
        PanelContext ctx = context_of(*shown);
        imgui.window_frame(
            "weights", 1400, 900, [&] { panel.draw(ctx); }, [&] { panel.draw_windows(ctx); });
    }
    // Frames until the job the panel started has finished and its result is shown.
    // (A toolbar change made during a frame starts its job on the next one, so a few rounds.)
    void settle() {
        frames_until_jobs_done(4, [this] { frame(); });
        REQUIRE_FALSE(panel.running());
        REQUIRE(panel.result() != nullptr);
    }
    // Drags on the value histogram from `lo` to `hi` (a zoom); returns the range the plot takes
    // them for, after rounding to whole pixels.
    std::pair<double, double> drag_on_plot(double lo, double hi) {
        HistogramPlot& plot = panel.plot();
        float from = std::floor(plot.x_of(lo)), to = std::floor(plot.x_of(hi));
        std::pair<double, double> range{plot.value_at(from), plot.value_at(to)};
        float y = (plot.plot_min().y + plot.plot_max().y) / 2;
        ImGuiIO& io = ImGui::GetIO();
        for (auto [x, down] : {std::pair{from, false}, std::pair{from, true}, std::pair{to, true}, std::pair{to, false}}) {
            io.MousePos = ImVec2(x, y);
            io.MouseDown[0] = down;
            frame();
        }
        io.MousePos = ImVec2(-1000, -1000);
        return range;
    }
};

}  // namespace

TEST_CASE("analyze_weights computes stats, histogram and first values of one expert", "[gui-weights]") {
    WeightsHarness h;
    CHECK(expert_count(*h.a->model(), 0) == 2u);
    CHECK_FALSE(expert_count(*h.a->model(), 1).has_value());

    WeightsRequest rq;
    rq.model = h.a->model();
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
    rq.model = h.a->model();
    rq.tensor = 1;
    rq.bins = 8;
    rq.columns = 3;
    rq.other = h.b->model();
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
    CHECK(csv.starts_with("series,bin,lo,hi,count\nvalues,0,-3.75,-2.8125,2\n"));
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
    const std::optional<StatsRoute> route = h.panel.result()->stats_route;
    REQUIRE(route);

    // Dragging over [0, 2] on the plot re-bins that range with the same bin count and keeps the
    // statistics of the whole tensor.
    auto [lo, hi] = h.drag_on_plot(0.0, 2.0);
    h.settle();
    const WeightsResult* zoomed = h.panel.result();
    CHECK(zoomed->histogram.lo == Approx(lo));
    CHECK(zoomed->histogram.hi == Approx(hi));
    CHECK(zoomed->histogram.counts.size() == 8);
    CHECK(zoomed->histogram.total() == 16);
    CHECK(zoomed->stats->min == -3.75);
    CHECK(zoomed->stats_route == route);  // kept with the statistics, not taken again

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

TEST_CASE("analyze_weights summarizes the block scales of quantized tensors and expert slices", "[gui-weights]") {
    WeightsHarness h;
    const Model& m = *h.q->model();
    WeightsRequest rq;
    rq.model = h.q->model();
    rq.bins = 4;

    // Q8_0: one "d" per 32 values, 384 / 32 = 12 of them, three of them zero.
    rq.tensor = 0;
    REQUIRE(m.tensors[0].name == "q8.weight");
    WeightsResult q8;
    analyze_weights(rq, q8, nullptr);
    REQUIRE(q8.error.empty());
    CHECK(q8.stage == kWeightsStages);
    REQUIRE(q8.scales);
    CHECK(q8.scales->bins == 4);
    CHECK_FALSE(q8.scales->failed);
    // "d", then the rows: row_rms and row_absmax (96 values each, ne[0]).
    REQUIRE(q8.scales->series.size() == 3);
    const SeriesSummary& d = q8.scales->series[0];
    CHECK(q8.scales->series[1].name == "row_rms");
    CHECK(q8.scales->series[2].name == "row_absmax");
    CHECK(q8.scales->series[2].values_per_entry == m.tensors[0].ne[0]);
    CHECK(q8.scales->series[2].stats.count == q8.elements / m.tensors[0].ne[0]);
    CHECK(d.name == "d");
    CHECK(d.values_per_entry == 32);
    CHECK(d.stats.count == q8.elements / 32);
    CHECK(d.stats.count == 12);
    CHECK(d.stats.zeros == 3);
    CHECK(d.stats.min == 0);
    CHECK(d.stats.max == 2);
    CHECK(d.stats.mean == Approx(0.875));
    CHECK(d.histogram.counts == std::vector<uint64_t>{3, 3, 3, 3});  // bins [0, .5) [.5, 1) [1, 1.5) [1.5, 2]
    CHECK(d.histogram.total() == d.stats.count);

    // The second expert holds blocks 6..11: d = 1, 2, 0, 0.5, 1, 2.
    rq.expert = 1;
    WeightsResult expert;
    analyze_weights(rq, expert, nullptr);
    REQUIRE(expert.error.empty());
    const SeriesSummary* expert_d = scale_series(expert, "d");
    REQUIRE(expert_d);
    CHECK(expert_d->stats.count == 6);
    CHECK(expert_d->stats.zeros == 1);
    CHECK(expert_d->stats.mean == Approx(6.5 / 6));
    CHECK(expert_d->histogram.total() == 6);
    rq.expert.reset();

    // Q4_K: d and dmin per 256 values, sub_scale and sub_min per 32.
    rq.tensor = 1;
    WeightsResult q4k;
    analyze_weights(rq, q4k, nullptr);
    REQUIRE(q4k.error.empty());
    REQUIRE(q4k.scales);
    std::vector<std::string> names;
    for (const SeriesSummary& s : q4k.scales->series) {
        names.push_back(s.name);
        CHECK(s.stats.count == 512 / s.values_per_entry);
        CHECK(s.histogram.total() == s.stats.count);
        CHECK(s.histogram.counts.size() == 4);
    }
    CHECK(names == std::vector<std::string>{"d", "dmin", "sub_scale", "sub_min", "row_rms", "row_absmax"});
    CHECK(scale_series(q4k, "d")->values_per_entry == 256);
    CHECK(scale_series(q4k, "sub_min")->values_per_entry == 32);
    CHECK(scale_series(q4k, "dmin")->stats.mean == 0.5);
    const SeriesSummary* sub_scale = scale_series(q4k, "sub_scale");
    CHECK(sub_scale->stats.count == 16);
    CHECK(sub_scale->stats.zeros == 14);
    CHECK(sub_scale->stats.max == 5);
    CHECK(scale_series(q4k, "sub_min")->stats.max == 1.5);

    // F32 has no block scales, and that is no error: only its one row of 32 values.
    rq.tensor = 2;
    WeightsResult f32;
    analyze_weights(rq, f32, nullptr);
    REQUIRE(f32.error.empty());
    REQUIRE(f32.scales);
    REQUIRE(f32.scales->series.size() == 2);
    CHECK(f32.scales->series[0].name == "row_rms");
    CHECK(f32.scales->series[0].stats.count == 1);
    CHECK_FALSE(f32.scales->failed);
    CHECK(f32.scales->note == "F32 stores no block scales");
    CHECK(f32.stage == kWeightsStages);

    // Not asked for: none decoded.
    rq.tensor = 0;
    rq.want_scales = false;
    WeightsResult without;
    analyze_weights(rq, without, nullptr);
    CHECK_FALSE(without.scales);
    CHECK(without.stage == kWeightsStages);

    // Cancelled before it starts: no result.
    rq.want_scales = true;
    JobContext job;
    job.cancel();
    WeightsResult cancelled;
    analyze_weights(rq, cancelled, &job);
    CHECK(cancelled.cancelled);
}

TEST_CASE("the Weights panel shows block scales, keeps the chosen series and re-bins them with the bin count", "[gui-weights]") {
    WeightsHarness h;
    h.shown = h.q;
    h.q->select({SelectionKind::tensor, 1});
    h.panel.set_bins(16);
    h.settle();
    const WeightsResult* r = h.panel.result();
    REQUIRE(r->scales);
    REQUIRE(r->scales->series.size() == 6);
    CHECK(r->scales->bins == 16);
    CHECK(h.panel.scales_view().shown() == "d");

    h.panel.scales_view().select("sub_scale");
    h.frame();
    CHECK(h.panel.scales_view().shown() == "sub_scale");
    // Hovering the series histogram shows its bins.
    HistogramPlot& scales_plot = h.panel.scales_view().plot();
    ImGui::GetIO().MousePos = ImVec2(scales_plot.x_of(4.9), (scales_plot.plot_min().y + scales_plot.plot_max().y) / 2);
    h.frame();
    h.frame();
    REQUIRE(scales_plot.hover().size() == 1);
    CHECK(scales_plot.hover()[0].count == 2);
    ImGui::GetIO().MousePos = ImVec2(-1000, -1000);

    // A zoom re-bins the values (-1.5 in each first sub-block, 0 elsewhere) alone; the scales stay
    // as they were.
    auto zoom = h.drag_on_plot(-1.2, -0.3);
    h.settle();
    REQUIRE(h.panel.result() != r);
    CHECK(h.panel.result()->histogram.lo == Approx(zoom.first));
    REQUIRE(h.panel.result()->scales);
    CHECK(h.panel.result()->scales->bins == 16);
    CHECK(scale_series(*h.panel.result(), "sub_scale")->stats.zeros == 14);

    // A new bin count re-bins the scales too.
    h.panel.set_bins(8);
    h.settle();
    REQUIRE(h.panel.result()->scales);
    CHECK(h.panel.result()->scales->bins == 8);
    CHECK(scale_series(*h.panel.result(), "sub_scale")->histogram.counts.size() == 8);

    // The Q8_0 tensor has no "sub_scale": its first series is shown.
    h.q->select({SelectionKind::tensor, 0});
    h.settle();
    CHECK(h.panel.scales_view().shown() == "d");
    CHECK(scale_series(*h.panel.result(), "d")->stats.count == 12);

    // F32: the section says the type has no block scales and shows its rows.
    h.q->select({SelectionKind::tensor, 2});
    h.settle();
    REQUIRE(h.panel.result()->scales);
    CHECK(h.panel.result()->scales->note == "F32 stores no block scales");
    CHECK(h.panel.scales_view().shown() == "row_rms");
}

TEST_CASE("analyze_weights compares a tensor with its requantized copy", "[gui-weights]") {
    WeightsHarness h;
    const uint32_t q8_0 = *ggml_type_from_name("Q8_0"), q4_0 = *ggml_type_from_name("Q4_0");
    const uint32_t q4_k = *ggml_type_from_name("Q4_K");
    auto analyze = [&](size_t tensor, uint32_t type) {
        WeightsRequest rq;
        rq.model = h.q->model();
        rq.tensor = tensor;
        rq.bins = 16;
        rq.want_scales = false;
        rq.requant_type = type;
        auto r = std::make_unique<WeightsResult>();
        analyze_weights(rq, *r, nullptr);
        REQUIRE(r->error.empty());
        CHECK(r->stage == kWeightsStages);
        return r;
    };
    // f32.weight holds 0..31: one row, one block of the legacy types.
    auto q8 = analyze(2, q8_0);
    REQUIRE(q8->compare_error.empty());
    REQUIRE(q8->compared);
    CHECK(q8->comparison.count == 32);
    CHECK(q8->comparison.rmse > 0);
    CHECK(q8->other_histogram.lo == q8->histogram.lo);
    CHECK(q8->other_histogram.counts.size() == 16);
    CHECK(q8->other_histogram.total() == 32);
    CHECK(q8->error_histogram.total() == 32);
    auto q4 = analyze(2, q4_0);
    REQUIRE(q4->compared);
    CHECK(q8->comparison.rmse < q4->comparison.rmse);

    // q8.weight has rows of 64 values, which do not split into the 256-value blocks of Q4_K.
    auto k = analyze(0, q4_k);
    CHECK_FALSE(k->compared);
    CHECK(k->compare_error == "rows of 64 values do not split into blocks of 256");
    CHECK(k->stats->count == 384);
}

TEST_CASE("the Weights panel compares with the tensor requantized as a chosen type", "[gui-weights]") {
    WeightsHarness h;
    h.shown = h.q;
    h.q->select({SelectionKind::tensor, 2});
    h.panel.set_bins(16);
    h.settle();
    CHECK_FALSE(h.panel.result()->compared);
    CHECK(h.panel.legend() == std::vector<std::string>{h.q->title});

    h.panel.compare_with_requantized(*ggml_type_from_name("Q8_0"));
    h.settle();
    const WeightsResult* r = h.panel.result();
    REQUIRE(r->compared);
    CHECK(r->comparison.rmse > 0);
    CHECK(r->other_histogram.total() == 32);
    CHECK(h.panel.compare_title() == "requantized as Q8_0");
    CHECK(h.panel.legend() == std::vector<std::string>{h.q->title, "requantized as Q8_0"});
    h.panel.show_error_histogram(true);
    h.frame();
    CHECK(h.panel.legend() == std::vector<std::string>{"difference (this \xE2\x88\x92 requantized as Q8_0)"});
    h.panel.show_error_histogram(false);

    // A type the rows cannot take shows the reason in place of the metrics.
    h.q->select({SelectionKind::tensor, 0});
    h.settle();
    h.panel.compare_with_requantized(*ggml_type_from_name("Q4_K"));
    h.settle();
    CHECK_FALSE(h.panel.result()->compared);
    CHECK(h.panel.result()->compare_error == "rows of 64 values do not split into blocks of 256");

    // Another document replaces the requantized copy, and "nothing" clears the comparison.
    h.panel.compare_with(h.a->id);
    h.settle();
    CHECK(h.panel.compare_title() == h.a->title);
    h.panel.compare_with(0);
    h.settle();
    CHECK_FALSE(h.panel.result()->compared);
    CHECK(h.panel.result()->compare_error.empty());
    CHECK(h.panel.compare_title().empty());
    CHECK(h.panel.legend() == std::vector<std::string>{h.q->title});
}

TEST_CASE("comparing with a Hugging Face checkpoint pairs its tensor and expert through the name map", "[gui-weights]") {
    TempDir dir;
    const test::HfConversionFiles files = test::write_hf_conversion(dir.path());
    auto gguf = open_model(files.gguf);
    auto hf = open_model(files.safetensors);
    REQUIRE(gguf.ok());
    REQUIRE(hf.ok());
    auto gguf_model = std::make_shared<const Model>(std::move(*gguf));
    auto hf_model = std::make_shared<const Model>(std::move(*hf));
    auto index = [](const Model& m, const std::string& name) {
        const TensorInfo* t = m.find_tensor(name);
        REQUIRE(t);
        return static_cast<size_t>(t - m.tensors.data());
    };
    auto compare = [&](std::shared_ptr<const Model> mine, std::shared_ptr<const Model> other, const std::string& name,
                       std::optional<uint64_t> expert) {
        WeightsRequest rq;
        rq.model = mine;
        rq.other = other;
        rq.tensor = index(*mine, name);
        rq.expert = expert;
        rq.want_scales = false;
        auto r = std::make_unique<WeightsResult>();
        analyze_weights(rq, *r, nullptr);
        REQUIRE(r->error.empty());
        return r;
    };
    // Q rows come back in the converter's order, so the permuted tensors are equal.
    auto q = compare(gguf_model, hf_model, "blk.0.attn_q.weight", std::nullopt);
    INFO(q->compare_error);
    REQUIRE(q->compared);
    CHECK(q->comparison.rmse == 0.0);
    auto q_hf = compare(hf_model, gguf_model, "model.layers.0.self_attn.q_proj.weight", std::nullopt);
    REQUIRE(q_hf->compared);
    CHECK(q_hf->comparison.rmse == 0.0);
    // One expert of the stacked GGUF tensor against that expert's own HF tensor.
    auto expert = compare(gguf_model, hf_model, "blk.0.ffn_gate_exps.weight", 1);
    REQUIRE(expert->compared);
    CHECK(expert->comparison.count == 48);
    CHECK(expert->comparison.rmse == 0.0);
    auto whole = compare(gguf_model, hf_model, "blk.0.ffn_gate_exps.weight", std::nullopt);
    CHECK_FALSE(whole->compared);
    CHECK(whole->compare_error.find("no tensor paired") != std::string::npos);
}

TEST_CASE("analyze_weights bins a tensor with outlier columns over p0.1-p99.9 and counts the outliers outside", "[gui-weights]") {
    TempDir dir;
    const std::vector<float> values = test::outlier_weights();
    test::write_fixture_model(dir.file("o.gguf"), {{"blk.0.ffn_down.weight", GGML_TYPE_F32, {4096, 16}, values}});
    auto model = open_model(dir.file("o.gguf"));
    REQUIRE(model.ok());

    WeightsRequest rq;
    rq.model = std::make_shared<const Model>(std::move(*model));
    rq.bins = 64;
    rq.want_scales = false;
    WeightsResult r;
    JobContext job;
    analyze_weights(rq, r, &job);
    REQUIRE(r.error.empty());
    REQUIRE(r.stats);
    const HistogramRange expected = pick_histogram_range(*r.stats, HistogramRangeMode::automatic);
    CHECK(r.range_used.resolved == HistogramRangeMode::central);
    CHECK(r.histogram.lo == expected.lo);
    CHECK(r.histogram.hi == expected.hi);
    uint64_t below = 0, above = 0;
    for (float x : values) {
        below += static_cast<double>(x) < expected.lo;
        above += static_cast<double>(x) > expected.hi;
    }
    CHECK(r.histogram.below == below);
    CHECK(r.histogram.above == above);
    CHECK(below + above > 0);

    // min-max on request: every value inside, two bins hold nearly all.
    rq.range_mode = HistogramRangeMode::full;
    WeightsResult full;
    analyze_weights(rq, full, &job);
    CHECK(full.range_used.resolved == HistogramRangeMode::full);
    CHECK(full.histogram.lo == r.stats->min);
    CHECK((full.histogram.below == 0 && full.histogram.above == 0));

    // A histogram-only request takes its range from the statistics it is given.
    rq.range_mode = HistogramRangeMode::automatic;
    rq.want_stats = false;
    rq.known_stats = r.stats;
    WeightsResult again;
    analyze_weights(rq, again, &job);
    CHECK(again.histogram.lo == expected.lo);
    CHECK(again.histogram.counts == r.histogram.counts);
}
