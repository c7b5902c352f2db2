// Theme: ImGui style for the dark (default) and light themes, and the few semantic colours
// panels use so both themes stay readable.
#pragma once

#include <imgui.h>

namespace mlens {

struct Palette {
    ImVec4 dim;  // secondary text (types, units, offsets)
    ImVec4 accent;  // headings, links
    ImVec4 warning;
    ImVec4 error;
    ImVec4 ok;
    ImVec4 marker;  // visible-made characters in token pieces (·, ▁, Ġ)
    ImVec4 escape;  // escapes in token pieces (\n, \xNN)
    ImVec4 byte_token;  // <0xNN> tokens
    ImVec4 highlight_bg;  // selected bytes in the hex view
    ImVec4 magnitude;  // the hue of the sequential ramp for quantities with no good or bad end
};

void apply_theme(bool light, float scale = 1.0f);
const Palette& palette();
// A neutral sequential ramp (one blue hue, growing opacity) for a quantity that is neither good nor
// bad, such as bits per weight: t in [0, 1] (clamped) from faint to full. Never red, amber or
// green, which mean error, warning and success everywhere in the app.
ImU32 sequential_color(double t);

}  // namespace mlens
