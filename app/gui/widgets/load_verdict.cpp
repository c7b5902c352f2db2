#include "widgets/load_verdict.h"

#include "mlens/text/escape.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens::ui {

namespace {

void reason_lines(const LoadReason& r, const ImVec4& color) {
    std::string head = load_problem_name(r.problem);
    if (!r.name.empty()) head += " " + std::string(load_subject_name(r.subject)) + " " + escape_for_display(r.name, 200);
    text_colored(color, head);
    ImGui::Indent();
    wrapped_text(escape_for_display(r.text, 1000));
    if (!r.fix.empty()) {
        text_dim("fix:");
        ImGui::SameLine();
        wrapped_text(escape_for_display(r.fix, 1000));
    }
    ImGui::Unindent();
}

}  // namespace

const ImVec4& load_verdict_color(LoadVerdict v) {
    if (v == LoadVerdict::loads) return palette().ok;
    return v == LoadVerdict::loads_after_compat ? palette().warning : palette().error;
}

void load_verdict_text(const Loadability& l) {
    ImGui::PushStyleColor(ImGuiCol_Text, load_verdict_color(l.verdict));
    wrapped_text(escape_for_display(l.summary(), 1000));
    ImGui::PopStyleColor();
}

void load_verdict_cell(const Loadability& l) {
    cell_text_colored(load_verdict_color(l.verdict), l.label());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(l.summary(), 1000).c_str());
}

void load_reasons(const Loadability& l) {
    for (const LoadReason& r : l.reasons) reason_lines(r, load_verdict_color(l.verdict));
    for (const LoadReason& r : l.warnings) reason_lines(r, palette().warning);
}

}  // namespace mlens::ui
