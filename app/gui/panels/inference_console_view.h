// InferenceConsoleView (Inference › Console): the llama.cpp log lines captured for this document
// (loads of A and B, decoding), coloured by level, with a level filter, a text filter and copy.
//
// Contract: lines are read incrementally (LogCapture::lines_since) into a copy capped at
// LogCapture::kMaxLines; each line is escaped before display. The view follows new lines while
// scrolled to the bottom.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "panels/panel.h"
#include "state/inference_controller.h"

namespace mlens {

class InferenceConsoleView {
public:
    void draw(PanelContext& ctx, InferenceController& c);

    bool show_debug = false;
    std::string filter;

private:
    struct Line {
        LlamaLogLevel level;
        std::string text;  // escaped
    };
    void update(const InferenceController& c);

    std::vector<Line> m_lines;
    uint64_t m_next = 0;  // running number of the next line to read
};

}  // namespace mlens
