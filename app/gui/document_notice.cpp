#include "document_notice.h"

#include <imgui.h>

#include "mlens/model/truncation.h"
#include "mlens/text/escape.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

std::string failure_headline(const Document& doc) {
    if (doc.error_code == ErrorCode::E_NOT_A_MODEL) return doc.title + " is not a model file";
    if (doc.error_code == ErrorCode::E_NOT_FOUND) return doc.title + " was not found";
    return "Could not open " + doc.title;
}

std::string error_banner_text(const Model& model) {
    const size_t errors = listed_error_count(model);
    if (errors == 0) return {};
    std::string text = std::to_string(errors) + (errors == 1 ? " error" : " errors");
    for (const Diagnostic& d : model.diagnostics)
        if (d.severity == Severity::error)
            return text + " \xC2\xB7 " + std::string(code_name(d.code)) + ": " + escape_for_display(d.message, 300);
    return text;
}

bool draw_failed_page(const Document& doc) {
    ui::text_colored(palette().error, failure_headline(doc));
    ImGui::Spacing();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x * 0.7f);
    ui::text(doc.error);
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
    ui::text_dim(escape_for_display(doc.path, 300));
    if (doc.error_code) ui::text_dim(std::string(code_name(*doc.error_code)));
    if (doc.error_code == ErrorCode::E_NOT_A_MODEL)
        ui::text_dim("ModelLens opens GGUF and safetensors files, safetensors folders, Ollama stores and their models.");
    ImGui::Spacing();
    return ImGui::Button("Close");
}

float draw_error_banner(Document& doc) {
    if (!doc.is_model()) return 0.0f;
    const std::string text = error_banner_text(*doc.model());
    if (text.empty()) return 0.0f;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float height = ImGui::GetFrameHeight() + 2 * style.WindowPadding.y;
    ImVec4 bg = palette().error;
    bg.w = 0.18f;
    ImGui::PushStyleColor(ImGuiCol_ChildBg, bg);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(style.WindowPadding.x, style.WindowPadding.y));
    ImGui::BeginChild("error_banner", ImVec2(0, height), false, ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_NoScrollbar);
    ImGui::AlignTextToFramePadding();
    const float button_w = ImGui::CalcTextSize("Show diagnostics").x + 2 * style.FramePadding.x;
    // Cut at a word boundary before the button; hovering the banner shows it whole.
    const float room = ImGui::GetContentRegionAvail().x - button_w - 2 * style.ItemSpacing.x;
    ui::text_colored(palette().error, ui::elided_text("\xE2\x9C\x96 " + text, room));
    ImGui::SameLine(ImGui::GetWindowWidth() - button_w - style.WindowPadding.x);
    if (ImGui::Button("Show diagnostics")) doc.focus_panel = "diagnostics";
    ImGui::EndChild();
    ImGui::PopStyleVar();
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
        ui::text(text);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
    return height + style.ItemSpacing.y;
}

}  // namespace mlens
