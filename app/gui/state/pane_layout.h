// Widths of the navigator (left), center and inspector (right) panes for a window width.
//
// Contract:
//  - A side pane's remembered width of 0 means "automatic": a share of the window (left 15%,
//    right 22%) between its minimum and its default cap, so at 1366 px and wider the center keeps
//    at least 60% of the window. A width the user dragged is kept, within [minimum, maximum share].
//  - A collapsed pane is a strip kCollapsedWidth wide whatever its remembered width; a pane that
//    is absent (no panel shown in it) takes no space.
//  - The center never gets less than kMinCenterWidth; side panes give way first.
#pragma once

namespace mlens {

struct PaneState {
    float width = 0.0f;  // 0: automatic
    bool collapsed = false;
};

struct PaneLimits {
    float min_width;
    float auto_share;  // automatic width as a share of the window
    float auto_cap;  // automatic width at most this
    float max_share;  // a dragged width at most this share of the window
};

inline constexpr PaneLimits kLeftPaneLimits{140.0f, 0.15f, 260.0f, 0.30f};
inline constexpr PaneLimits kRightPaneLimits{200.0f, 0.22f, 380.0f, 0.45f};
inline constexpr float kCollapsedWidth = 24.0f;
inline constexpr float kMinCenterWidth = 240.0f;

struct PaneWidths {
    float left = 0.0f;
    float center = 0.0f;
    float right = 0.0f;
};

// The width a pane is drawn at when expanded, from its state, for a window `total` wide.
float expanded_pane_width(const PaneState& state, const PaneLimits& limits, float total);
// The largest width the user may drag a pane to, for a window `total` wide.
float max_pane_width(const PaneLimits& limits, float total);

// Widths of the three panes; `splitter` is the width of each handle next to a present side pane.
PaneWidths pane_widths(float total, float splitter, bool left_present, const PaneState& left, bool right_present, const PaneState& right);

}  // namespace mlens
