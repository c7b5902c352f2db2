#include "panels/store_summary_view.h"

#include <imgui.h>

#include "mlens/model/summary.h"
#include "mlens/ollama/config_fields.h"
#include "mlens/text/escape.h"
#include "mlens/text/readable_text.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr size_t kTextChars = 20000;
constexpr size_t kTooltipLines = 30;
// A text layer longer than this starts closed, so the ones after it stay in view.
constexpr size_t kOpenTextLines = 12;

void label(const char* name) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ui::text_dim(name);
    ImGui::TableNextColumn();
}

void fact(const char* name, const std::string& value) {
    label(name);
    if (value.empty())
        ui::text_dim("-");
    else
        ui::text(value);
}

// The first line of a text layer in the monospace font; the first lines of it on hover.
void text_head(const char* name, LayerKind kind, const std::string& raw, const FontSet& fonts) {
    label(name);
    const std::string readable = readable_layer_text(kind, raw, kTextChars);
    const TextHead line = first_lines(readable, 1);
    ImGui::PushFont(fonts.mono());
    ui::text(escape_for_display(line.text, 160) + (line.more_lines ? "  \xE2\x80\xA6" : ""));
    ImGui::PopFont();
    if (!ImGui::IsItemHovered()) return;
    const TextHead more = first_lines(readable, kTooltipLines);
    ImGui::BeginTooltip();
    ImGui::PushFont(fonts.mono());
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 50);
    ui::text(more.text);
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    if (more.more_lines) ui::text_dim("\xE2\x80\xA6 " + std::to_string(more.more_lines) + " more lines (Text layers below)");
    ImGui::EndTooltip();
}

}  // namespace

void store_summary_view(const StoreModelSummary& s, std::optional<uint64_t> size, const FontSet& fonts) {
    if (!ImGui::BeginTable("summary", 2, ImGuiTableFlags_SizingFixedFit)) return;
    ImGui::TableSetupColumn("fact", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    fact("Format", s.format == "gguf" ? "GGUF" : escape_for_display(s.format, 40));
    fact("Family", escape_for_display(s.family, 80));
    fact("Parameters", escape_for_display(parameters_text(s), 80));
    if (s.parameters && !s.parameter_size.empty() && ImGui::IsItemHovered())
        ImGui::SetTooltip("Elements of the logical tensors; the config says %s", escape_for_display(s.parameter_size, 40).c_str());
    fact("Quantization", escape_for_display(s.quantization, 80));
    fact("Context length", s.context_length ? ui::with_separators(*s.context_length) : "");
    label("Capabilities");
    if (s.capabilities.empty()) ui::text_dim("-");
    for (size_t i = 0; i < s.capabilities.size(); ++i) {
        if (i) ImGui::SameLine();
        ui::text_colored(palette().accent, escape_for_display(s.capabilities[i], 40));
    }
    fact("Size", size ? human_bytes(*size) + " (all layers)" : "");
    if (!s.template_text.empty()) text_head("Template", LayerKind::template_text, s.template_text, fonts);
    if (!s.system_text.empty()) text_head("System", LayerKind::system, s.system_text, fonts);
    for (const std::string& license : s.licenses) text_head("License", LayerKind::license, license, fonts);
    ImGui::EndTable();
}

void store_config_view(const ManifestView& v) {
    if (v.config_error) ui::text_colored(palette().error, escape_for_display(v.config_error->to_string(), 400));
    if (!v.config) return;
    const ModelConfig& c = *v.config;
    if (!ImGui::BeginTable("config", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) return;
    ImGui::TableSetupColumn("field", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    for (const ConfigField& f : config_fields(c)) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text_dim(f.label);
        ImGui::TableNextColumn();
        ui::text(escape_for_display(f.value, 300));
    }
    ImGui::EndTable();
}

void store_text_layers_view(const ManifestView& v, const FontSet& fonts) {
    bool any = false;
    for (size_t i = 0; i < v.layers.size(); ++i) {
        const LayerView& lv = v.layers[i];
        if (!layer_is_text(lv.layer.kind)) continue;
        any = true;
        ImGui::PushID(static_cast<int>(i));
        const std::string readable = lv.text ? readable_layer_text(lv.layer.kind, lv.text->text, kTextChars) : "";
        const bool short_text = first_lines(readable, kOpenTextLines).more_lines == 0;
        std::string title = std::string(layer_kind_name(lv.layer.kind)) + "  " + human_bytes(lv.layer.size);
        if (ImGui::TreeNodeEx(title.c_str(), short_text ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
            if (lv.text_error) ui::text_colored(palette().error, escape_for_display(lv.text_error->to_string(), 300));
            if (lv.text) {
                ImGui::PushFont(fonts.mono());
                ImGui::PushTextWrapPos(0);
                ui::text(readable);
                ImGui::PopTextWrapPos();
                ImGui::PopFont();
                if (lv.text->truncated()) ui::text_dim("\xE2\x80\xA6 truncated");
            }
            ImGui::TreePop();
        }
        ImGui::PopID();
    }
    if (!any) ui::text_dim("No text layers (template, system, params, messages, license).");
}

}  // namespace mlens
