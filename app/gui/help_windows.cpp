// Help → Keyboard shortcuts and Help → What each panel shows. The panel texts come from the panel
// registry, the one place a panel is declared, so the window lists exactly the panels there are.
#include <imgui.h>

#include "app_shell.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

struct Shortcut {
    const char* keys;
    const char* action;
};

// The keys the app handles (AppShell::shortcuts, the panels' filters, the file chooser, the plots).
constexpr Shortcut kShortcuts[] = {
    {"Ctrl+O", "Open a file or folder"},
    {"Ctrl+W", "Close the document in front"},
    {"Ctrl+Q", "Quit"},
    {"Ctrl+F", "Filter the focused table (Metadata, Tensors, Tokenizer, Compat, Diagnostics, array viewer)"},
    {"Ctrl+C", "Over a table cell: copy its whole text (a cut text ends with \xE2\x80\xA6; hovering shows it whole)"},
    {"Escape", "Close the file chooser"},
    {"Double-click",
     "Metadata: open an array in the array viewer; file chooser: open; histogram: reset the zoom; "
     "between panes: back to the automatic width"},
    {"Drag", "Histogram: zoom to the dragged range; between panes: resize them"},
    {"Click \xE2\x97\x80 \xE2\x96\xB6", "Collapse the navigator or the inspector to a strip at the edge; click the strip to open it"},
    {"Right-click", "Histogram: zoom menu; table rows: copy the name, key or value; a table cell: copy its text"},
};

const char* slot_name(PanelSlot slot) {
    return slot == PanelSlot::left ? "left pane" : slot == PanelSlot::right ? "right pane" : "center tab";
}

}  // namespace

void AppShell::help_windows() {
    if (m_show_shortcuts) {
        ImGui::SetNextWindowSize(ImVec2(620, 0), ImGuiCond_Appearing);
        if (ImGui::Begin("Keyboard shortcuts", &m_show_shortcuts, ImGuiWindowFlags_NoCollapse) &&
            ImGui::BeginTable("shortcuts", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
            ImGui::TableSetupColumn("Keys", ImGuiTableColumnFlags_WidthFixed);
            ImGui::TableSetupColumn("Does", ImGuiTableColumnFlags_WidthStretch);
            ImGui::TableHeadersRow();
            for (const Shortcut& s : kShortcuts) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ui::text_colored(palette().accent, s.keys);
                ImGui::TableNextColumn();
                ImGui::TextWrapped("%s", s.action);
            }
            ImGui::EndTable();
        }
        ImGui::End();
    }
    if (m_show_panel_guide) {
        ImGui::SetNextWindowSize(ImVec2(760, 560), ImGuiCond_Appearing);
        if (ImGui::Begin("What each panel shows", &m_show_panel_guide, ImGuiWindowFlags_NoCollapse) &&
            ImGui::BeginTable("panels", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY)) {
            ImGui::TableSetupScrollFreeze(0, 1);
            ImGui::TableSetupColumn("Panel", ImGuiTableColumnFlags_WidthFixed);
            ImGui::TableSetupColumn("--panel", ImGuiTableColumnFlags_WidthFixed);
            ImGui::TableSetupColumn("What it shows", ImGuiTableColumnFlags_WidthStretch);
            ImGui::TableHeadersRow();
            for (const PanelInfo& p : panel_registry()) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ui::text_colored(palette().accent, p.title);
                ui::text_dim(slot_name(p.slot));
                ImGui::TableNextColumn();
                ui::text(p.slot == PanelSlot::center ? p.id : "");
                ImGui::TableNextColumn();
                ImGui::TextWrapped("%s", p.description);
            }
            ImGui::EndTable();
        }
        ImGui::End();
    }
}

}  // namespace mlens
