#include <catch2/catch.hpp>

#include <cmath>

#include <imgui.h>

#include "capture.h"
#include "headless.h"
#include "plot_axes.h"
#include "widgets/histogram_plot.h"

using namespace mlens;
using mlens::test::HeadlessImGui;

namespace {

struct PlotHarness {
    HeadlessImGui imgui;
    HistogramPlot plot;
    std::vector<HistogramSeries> series;

    // One frame with the mouse at `x` (plot-relative vertical middle) and the left button as given.
    HistogramPlot::Event frame(float x, bool down) {
        ImGuiIO& io = ImGui::GetIO();
        io.MousePos = ImVec2(x, (plot.plot_min().y + plot.plot_max().y) / 2);
        io.MouseDown[0] = down;
        HistogramPlot::Event event = HistogramPlot::Event::none;
        imgui.frame([&] {
            ImGui::SetNextWindowPos(ImVec2(0, 0));
            ImGui::SetNextWindowSize(ImVec2(800, 400));
            ImGui::Begin("plot", nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoDecoration);
            event = plot.draw("##hist", series, ImVec2(600, 300));
            ImGui::End();
        });
        return event;
    }
};

HistogramSeries series(std::string label, double lo, double hi, std::vector<uint64_t> counts) {
    HistogramSeries s;
    s.label = std::move(label);
    s.lo = lo;
    s.hi = hi;
    s.counts = std::move(counts);
    return s;
}

}  // namespace

TEST_CASE("plot axes choose nice ticks and readable labels", "[gui-hist]") {
    CHECK(nice_ticks(0, 1, 5) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
    CHECK(nice_ticks(-0.37, 0.52, 6) == std::vector<double>{-0.2, 0, 0.2, 0.4});
    CHECK(nice_step(1000, 4) == 500);
    CHECK(nice_ticks(1, 1, 5).empty());
    // Step 0.2 would leave only 0 inside; 0.1 gives three ticks.
    CHECK(nice_ticks(-0.1999, 0.1998, 2) == std::vector<double>{-0.1, 0, 0.1});
    CHECK(tick_label(0.2, 0.2) == "0.2");
    CHECK(tick_label(-0.05, 0.05) == "-0.05");
    CHECK(tick_label(1500, 500) == "1500");
    CHECK(tick_label(2.5e6, 5e5) == "2.5e+06");
    CHECK(tick_label(3e-6, 1e-6) == "3.0e-06");
    CHECK(tick_label(0, 0.1) == "0");
    CHECK(count_label(950) == "950");
    CHECK(count_label(1234) == "1.2k");
    CHECK(count_label(25000) == "25k");
    CHECK(count_label(3.4e6) == "3.4M");
    CHECK(log_ticks(1234) == std::vector<uint64_t>{0, 1, 10, 100, 1000});
    CHECK(CountScale{true, 99}.fraction(9) == Approx(0.5));
    CHECK(CountScale{false, 40}.fraction(10) == Approx(0.25));
    CHECK(CountScale{true, 99}.fraction(0) == 0);
}

TEST_CASE("histogram series map values to bins", "[gui-hist]") {
    HistogramSeries s = series("a", 0, 4, {1, 2, 3, 4});
    CHECK(s.bin_width() == 1);
    CHECK(s.bin_of(0) == 0u);
    CHECK(s.bin_of(2.5) == 2u);
    CHECK(s.bin_of(4) == 3u);
    CHECK_FALSE(s.bin_of(4.01).has_value());
    CHECK_FALSE(s.bin_of(-0.01).has_value());
    CHECK(s.share_total() == 10);
    s.total = 20;
    CHECK(s.share_total() == 20);
}

TEST_CASE("hovering a bin reports its range, count and share for every series", "[gui-hist]") {
    PlotHarness h;
    h.series = {series("this", 0, 4, {1, 2, 3, 4}), series("other", 0, 4, {4, 3, 2, 1})};
    h.frame(-100, false);
    h.frame(h.plot.x_of(2.5), false);
    const auto& hover = h.plot.hover();
    REQUIRE(hover.size() == 2);
    CHECK(hover[0].series == 0);
    CHECK(hover[0].bin == 2);
    CHECK(hover[0].lo == 2);
    CHECK(hover[0].hi == 3);
    CHECK(hover[0].count == 3);
    CHECK(hover[0].share == Approx(0.3));
    CHECK(hover[1].count == 2);
    CHECK(hover[1].share == Approx(0.2));
    // Outside the plot area nothing is hovered.
    h.frame(h.plot.plot_max().x + 50, false);
    CHECK(h.plot.hover().empty());
}

TEST_CASE("dragging zooms to the selected range and double-click resets it", "[gui-hist]") {
    PlotHarness h;
    h.series = {series("", -2, 2, {5, 10, 10, 5})};
    h.frame(-100, false);
    CHECK(h.plot.shown_range() == ValueRange{-2, 2});
    // ImGui floors the mouse position to whole pixels.
    float a = std::floor(h.plot.x_of(-1.0)), b = std::floor(h.plot.x_of(0.5));
    double va = h.plot.value_at(a), vb = h.plot.value_at(b);
    CHECK(va == Approx(-1.0).margin(0.008));
    CHECK(vb == Approx(0.5).margin(0.008));
    CHECK(h.frame(a, false) == HistogramPlot::Event::none);
    CHECK(h.frame(a, true) == HistogramPlot::Event::none);
    CHECK(h.frame(b, true) == HistogramPlot::Event::none);
    CHECK(h.frame(b, false) == HistogramPlot::Event::zoomed);
    REQUIRE(h.plot.view().has_value());
    CHECK(h.plot.view()->lo == Approx(va));
    CHECK(h.plot.view()->hi == Approx(vb));
    h.frame(b, false);
    CHECK(h.plot.shown_range().lo == Approx(va));
    // The zoomed axis maps the range onto the whole plot width.
    CHECK(h.plot.x_of(va) == Approx(h.plot.plot_min().x).margin(0.01));
    CHECK(h.plot.x_of(vb) == Approx(h.plot.plot_max().x).margin(0.01));

    // A click without movement is not a zoom.
    float c = h.plot.x_of(0.0);
    h.frame(c, true);
    CHECK(h.frame(c, false) == HistogramPlot::Event::none);
    CHECK(h.frame(c, true) == HistogramPlot::Event::reset);
    h.frame(c, false);
    CHECK_FALSE(h.plot.view().has_value());
    CHECK(h.plot.shown_range() == ValueRange{-2, 2});
}

TEST_CASE("the plot draws bars, axes and a legend for two series, in log scale too", "[gui-hist]") {
    PlotHarness h;
    h.series = {series("this", 0, 1, {1, 100, 10000, 10}), series("other", 0, 1, {0, 50, 5000, 20})};
    h.frame(-100, false);
    int linear = ImGui::GetDrawData()->TotalVtxCount;
    h.plot.log_scale = true;
    h.frame(-100, false);
    int log = ImGui::GetDrawData()->TotalVtxCount;
    CHECK(linear > 200);
    CHECK(log > 200);
    // A single point (no spread) still gets a drawable range.
    h.series = {series("", 3, 3, {7})};
    h.frame(-100, false);
    CHECK(h.plot.shown_range() == ValueRange{1.5, 4.5});
}

TEST_CASE("plot captures map screen rectangles to framebuffer pixels", "[gui-hist]") {
    // A 2x framebuffer: y flips to count from the bottom.
    CHECK(capture_pixels(ImVec2(10, 20), ImVec2(110, 70), ImVec2(800, 600), 1600, 1200) == PixelRect{20, 1060, 200, 100});
    // Clamped to the framebuffer; nothing when outside.
    CHECK(capture_pixels(ImVec2(-5, -5), ImVec2(10, 10), ImVec2(100, 100), 100, 100) == PixelRect{0, 90, 10, 10});
    CHECK(capture_pixels(ImVec2(200, 200), ImVec2(300, 300), ImVec2(100, 100), 100, 100).w == 0);
    request_capture({"a.png", ImVec2(1, 2), ImVec2(3, 4), {}});
    request_capture({"b.png", ImVec2(1, 2), ImVec2(3, 4), {}});
    std::optional<CaptureRequest> r = take_capture_request();
    REQUIRE(r);
    CHECK(r->path == "b.png");
    CHECK_FALSE(take_capture_request().has_value());
}

TEST_CASE("values outside the range become striped end bins beside the plot, with their counts", "[gui-hist]") {
    PlotHarness h;
    h.series = {series("", -1, 1, {10, 40, 40, 10})};
    h.frame(-100, false);
    const float plain_left = h.plot.plot_min().x, plain_right = h.plot.plot_max().x;
    const int plain_vertices = ImGui::GetDrawData()->TotalVtxCount;
    h.series.front().below = 120;
    h.series.front().above = 3;
    h.frame(-100, false);
    // 12 pixels of end bin and 8 of gap on each side; the count axis grows to hold 120.
    CHECK(h.plot.plot_max().x == plain_right - 20);
    CHECK(h.plot.plot_min().x >= plain_left + 20);
    CHECK(ImGui::GetDrawData()->TotalVtxCount > plain_vertices + 100);
    // The bins keep mapping [lo, hi] onto the narrower plot area.
    CHECK(h.plot.x_of(-1) == h.plot.plot_min().x);
    CHECK(h.plot.x_of(1) == h.plot.plot_max().x);
    CHECK(decade_ticks(120) == std::vector<uint64_t>{1, 10, 100, 1000});
    CHECK(decade_ticks(0) == std::vector<uint64_t>{1, 10});
    CHECK(decade_ticks(10) == std::vector<uint64_t>{1, 10});
}
