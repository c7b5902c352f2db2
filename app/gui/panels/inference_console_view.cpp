#include "panels/inference_console_view.h"

#include <imgui.h>

#include "mlens/text/escape.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

ImVec4 level_color(LlamaLogLevel level) {
    const Palette& p = palette();
    switch (level) {
        case LlamaLogLevel::debug:
            return p.dim;
        case LlamaLogLevel::info:
            return ImGui::GetStyleColorVec4(ImGuiCol_Text);
        case LlamaLogLevel::warn:
            return p.warning;
        case LlamaLogLevel::error:
            return p.error;
    }
    return p.dim;
}

}  // namespace

void InferenceConsoleView::update(const InferenceController& c) {
    uint64_t total = c.log().total();
    if (total == m_next) return;
    for (LlamaLogLine& line : c.log().lines_since(m_next)) m_lines.push_back({line.level, escape_for_display(line.text, 1000)});
    m_next = total;
    if (m_lines.size() > LogCapture::kMaxLines)
        m_lines.erase(m_lines.begin(), m_lines.begin() + static_cast<std::ptrdiff_t>(m_lines.size() - LogCapture::kMaxLines));
}

void InferenceConsoleView::draw(PanelContext& ctx, InferenceController& c) {
    update(c);
    ImGui::Checkbox("debug lines", &show_debug);
    ImGui::SameLine();
    ui::search_box("console_filter", "filter lines", filter, 320);
    ImGui::SameLine();
    if (ImGui::Button("Copy all")) {
        std::string all;
        for (const Line& l : m_lines) all += std::string(llama_log_level_name(l.level)) + ": " + l.text + "\n";
        ImGui::SetClipboardText(all.c_str());
    }
    ImGui::SameLine();
    ui::text_dim(std::to_string(m_lines.size()) + " lines from llama.cpp");
    ImGui::BeginChild("console_lines", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    bool follow = ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 1.0f;
    ImGui::PushFont(ctx.fonts.mono());
    std::vector<size_t> shown;
    for (size_t i = 0; i < m_lines.size(); ++i) {
        const Line& l = m_lines[i];
        if (l.level == LlamaLogLevel::debug && !show_debug) continue;
        if (!filter.empty() && l.text.find(filter) == std::string::npos) continue;
        shown.push_back(i);
    }
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(shown.size()));
    while (clipper.Step())
        for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
            const Line& l = m_lines[shown[static_cast<size_t>(row)]];
            ui::text_colored(level_color(l.level), l.text);
        }
    ImGui::PopFont();
    if (follow) ImGui::SetScrollHereY(1.0f);
    ImGui::EndChild();
}

}  // namespace mlens
