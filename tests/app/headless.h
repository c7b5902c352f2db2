// Headless ImGui for the app tests: a context with fonts and a display size but no window, and
// frames driven by hand. Each test fixture owns one context.
#pragma once

#include <functional>
#include <string>

#include "fonts.h"
#include "test_paths.h"

namespace mlens::test {

class HeadlessImGui {
public:
    HeadlessImGui(float width = 1600, float height = 1000);
    ~HeadlessImGui();
    // One frame: NewFrame, draw(), Render. Rebuilds the font atlas first when asked, like the window loop.
    void frame(const std::function<void()>& draw);
    // One frame with draw() inside a window called `name`, `width` × `height` at the origin (a
    // panel laid out as in the app, without the shell around it), then after() outside it
    // (the panel's own windows).
    void window_frame(const char* name, float width, float height, const std::function<void()>& draw,
                      const std::function<void()>& after = {});
    FontSet& fonts() { return m_fonts; }

private:
    FontSet m_fonts;
};

}  // namespace mlens::test
