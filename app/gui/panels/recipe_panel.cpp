#include "panels/recipe_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "mlens/text/plural.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

ImU32 bpw_color(double bpw) { return sequential_color(bpw_ramp_position(bpw)); }

std::string bpw_text(double bpw) { return bits_per_weight_text(bpw) + " bpw"; }

}  // namespace

double bpw_ramp_position(double bpw) { return std::clamp(std::log2(std::max(bpw, 1.0)) / 5.0, 0.0, 1.0); }

void RecipePanel::draw(PanelContext& ctx) {
    if (!m_recipe) {
        m_recipe = quant_recipe(*ctx.doc.model());
        m_command = llama_quantize_command(*m_recipe);
        m_min_bpw = 1e300;
        m_max_bpw = 0;
        for (const RecipeLayerRow& row : m_recipe->layers)
            for (const auto& c : row.cells)
                if (c && c->bits_per_weight > 0) {
                    m_min_bpw = std::min(m_min_bpw, c->bits_per_weight);
                    m_max_bpw = std::max(m_max_bpw, c->bits_per_weight);
                }
    }
    const QuantRecipe& r = *m_recipe;
    if (r.no_command.empty()) {
        ui::text_colored(palette().accent,
                         "llama-quantize command (base " + r.base + ", " + plural(r.rules.size(), "rule") + ")");
        ImGui::PushFont(ctx.fonts.mono());
        ImGui::TextWrapped("%s", m_command.c_str());
        ImGui::PopFont();
        if (ImGui::SmallButton("Copy command")) ImGui::SetClipboardText(m_command.c_str());
    } else {
        ui::text_dim("No llama-quantize command: " + r.no_command + ".");
    }
    if (!r.provenance.empty()) {
        ImGui::Spacing();
        ui::text_colored(palette().accent, "Provenance");
        for (const auto& [key, value] : r.provenance) ui::label_value(escape_for_display(key, 80), value);
    }
    ImGui::Spacing();
    if (!r.layers.empty()) draw_heat_map(ctx);
}

void RecipePanel::draw_heat_map(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const QuantRecipe& r = *m_recipe;
    ui::text_colored(palette().accent, "Types by layer");
    ImGui::SameLine();
    ui::text_dim("here " + bpw_text(m_min_bpw) + " to " + bpw_text(m_max_bpw));
    // Legend: the common widths, shaded as the cells are (more bits, deeper shade).
    ImGui::AlignTextToFramePadding();
    ui::text_dim("bits per weight (log scale):");
    for (double bpw : {2.0, 3.0, 4.5, 5.5, 6.5625, 8.5, 16.0, 32.0}) {
        ImGui::SameLine(0, 2);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float h = ImGui::GetTextLineHeight();
        ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + h * 2.6f, p.y + h), bpw_color(bpw));
        char label[16];
        std::snprintf(label, sizeof label, "%.3g", bpw);
        ImGui::GetWindowDrawList()->AddText(ImVec2(p.x + 3, p.y), ImGui::GetColorU32(ImGuiCol_Text), label);
        ImGui::Dummy(ImVec2(h * 2.6f, h));
    }
    const int columns = static_cast<int>(r.kinds.size()) + 1;
    if (columns > 64) {
        ui::text_dim(std::to_string(r.kinds.size()) + " tensor kinds: too many columns to draw; see mlens recipe.");
        return;
    }
    ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    const float height =
        std::min(ImGui::GetContentRegionAvail().y * 0.75f,
                 (ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1) * static_cast<float>(r.layers.size() + 1) +
                     2 * ImGui::GetStyle().ScrollbarSize);
    if (ImGui::BeginTable("recipe", columns, flags, ImVec2(0, height))) {
        ImGui::TableSetupScrollFreeze(1, 1);
        ImGui::TableSetupColumn("layer");
        for (const std::string& k : r.kinds) {
            std::string label = k;
            if (label.size() > 7 && label.ends_with(".weight")) label.resize(label.size() - 7);
            ImGui::TableSetupColumn(escape_for_display(label, 24).c_str());
        }
        ImGui::TableHeadersRow();
        for (const RecipeLayerRow& row : r.layers) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ui::text_dim(std::to_string(row.layer));
            for (const auto& c : row.cells) {
                ImGui::TableNextColumn();
                if (!c) continue;
                ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, bpw_color(c->bits_per_weight));
                ImGui::PushID(static_cast<int>(c->tensor_index));
                const bool selected = doc.selection == Selection{SelectionKind::tensor, c->tensor_index};
                if (ImGui::Selectable(c->type.c_str(), selected)) doc.select({SelectionKind::tensor, c->tensor_index});
                if (ImGui::IsItemHovered())
                    ImGui::SetTooltip("%s\n%s, %s", escape_for_display(c->tensor, 120).c_str(), c->type.c_str(),
                                      bpw_text(c->bits_per_weight).c_str());
                ImGui::PopID();
            }
        }
        ImGui::EndTable();
    }
    if (r.other.empty()) return;
    ImGui::Spacing();
    ui::text_colored(palette().accent, "Outside the layers");
    for (const RecipeCell& c : r.other) {
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float h = ImGui::GetTextLineHeight();
        ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + h, p.y + h), bpw_color(c.bits_per_weight));
        ImGui::Dummy(ImVec2(h, h));
        ImGui::SameLine();
        ImGui::PushID(static_cast<int>(c.tensor_index));
        const bool selected = doc.selection == Selection{SelectionKind::tensor, c.tensor_index};
        if (ImGui::Selectable((escape_for_display(c.tensor, 80) + "  " + c.type + "  " + bpw_text(c.bits_per_weight)).c_str(), selected))
            doc.select({SelectionKind::tensor, c.tensor_index});
        ImGui::PopID();
    }
}

}  // namespace mlens
