#include "pane_layout.h"

#include <algorithm>

namespace mlens {

float max_pane_width(const PaneLimits& limits, float total) { return std::max(limits.min_width, total * limits.max_share); }

float expanded_pane_width(const PaneState& state, const PaneLimits& limits, float total) {
    if (state.width <= 0.0f) return std::clamp(total * limits.auto_share, limits.min_width, limits.auto_cap);
    return std::clamp(state.width, limits.min_width, max_pane_width(limits, total));
}

PaneWidths pane_widths(float total, float splitter, bool left_present, const PaneState& left, bool right_present, const PaneState& right) {
    PaneWidths w;
    auto side = [&](bool present, const PaneState& state, const PaneLimits& limits) {
        if (!present) return 0.0f;
        return state.collapsed ? kCollapsedWidth : expanded_pane_width(state, limits, total);
    };
    w.left = side(left_present, left, kLeftPaneLimits);
    w.right = side(right_present, right, kRightPaneLimits);
    float handles = (left_present ? splitter : 0.0f) + (right_present ? splitter : 0.0f);
    // In a window too narrow for both panes at their widths, the side panes shrink (each to its
    // minimum at most, in proportion) so the tables in the center stay usable.
    float excess = w.left + w.right + handles + kMinCenterWidth - total;
    if (excess > 0.0f) {
        float left_room = left.collapsed ? 0.0f : std::max(0.0f, w.left - kLeftPaneLimits.min_width);
        float right_room = right.collapsed ? 0.0f : std::max(0.0f, w.right - kRightPaneLimits.min_width);
        float room = left_room + right_room;
        if (room > 0.0f) {
            float cut = std::min(excess, room);
            w.left -= cut * left_room / room;
            w.right -= cut * right_room / room;
        }
    }
    w.center = std::max(kMinCenterWidth, total - w.left - w.right - handles);
    return w;
}

}  // namespace mlens
