#include <catch2/catch.hpp>

#include "state/pane_layout.h"

using namespace mlens;

namespace {

// The main window's content width for a window `w` wide (6 px of padding each side).
float content_width(float window) { return window - 12.0f; }

}  // namespace

TEST_CASE("automatic side panes leave the center at least 60% of a 1366, 1600 or 1920 px window") {
    for (float window : {1366.0f, 1600.0f, 1920.0f}) {
        PaneWidths w = pane_widths(content_width(window), 8.0f, true, {}, true, {});
        INFO("window " << window);
        CHECK(w.center >= 0.6f * window);
        CHECK(w.left + w.right + 16.0f + w.center == Approx(content_width(window)));
    }
    PaneWidths at_1366 = pane_widths(1354.0f, 8.0f, true, {}, true, {});
    CHECK(at_1366.left == Approx(203.1f));
    CHECK(at_1366.right == Approx(297.88f));
    CHECK(at_1366.center == Approx(837.02f));
    PaneWidths at_1920 = pane_widths(1908.0f, 8.0f, true, {}, true, {});
    CHECK(at_1920.left == 260.0f);
    CHECK(at_1920.right == 380.0f);
    CHECK(at_1920.center == 1252.0f);
}

TEST_CASE("a collapsed pane is a strip, an absent one takes no space, a dragged one keeps its width within bounds") {
    PaneWidths collapsed = pane_widths(1354.0f, 8.0f, true, {300.0f, true}, true, {});
    CHECK(collapsed.left == kCollapsedWidth);
    CHECK(collapsed.center == Approx(1354.0f - kCollapsedWidth - 297.88f - 16.0f));

    PaneWidths no_right = pane_widths(1354.0f, 8.0f, true, {}, false, {});
    CHECK(no_right.right == 0.0f);
    CHECK(no_right.center == Approx(1354.0f - 203.1f - 8.0f));

    PaneWidths dragged = pane_widths(1354.0f, 8.0f, true, {100.0f, false}, true, {700.0f, false});
    CHECK(dragged.left == kLeftPaneLimits.min_width);
    CHECK(dragged.right == Approx(0.45f * 1354.0f));
}

TEST_CASE("in a narrow window the side panes give way in proportion to what they can lose") {
    PaneWidths w = pane_widths(800.0f, 8.0f, true, {240.0f, false}, true, {360.0f, false});
    // 56 px too many: the left pane can lose 100, the right 160.
    CHECK(w.left == Approx(240.0f - 56.0f * 100.0f / 260.0f));
    CHECK(w.right == Approx(360.0f - 56.0f * 160.0f / 260.0f));
    CHECK(w.center == Approx(kMinCenterWidth));
    PaneWidths tiny = pane_widths(500.0f, 8.0f, true, {}, true, {});
    CHECK(tiny.left == kLeftPaneLimits.min_width);
    CHECK(tiny.right == kRightPaneLimits.min_width);
    CHECK(tiny.center == kMinCenterWidth);
}
