#include "panels/navigator_panel.h"

#include <algorithm>

#include <imgui.h>

#include "mlens/model/truncation.h"
#include "mlens/text/escape.h"
#include "panels/panel_links.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr size_t kMaxListedDiagnostics = 500;

ImGuiTreeNodeFlags leaf_flags(bool selected) {
    return ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen | ImGuiTreeNodeFlags_SpanAvailWidth |
        (selected ? ImGuiTreeNodeFlags_Selected : 0);
}

// A leaf row with a dim count after the label and a dot when it holds the selected item;
// returns true when clicked.
// In a narrow pane the label and the count are elided at a word boundary; hovering shows them whole.
bool leaf(const std::string& label, const std::string& count, bool selected, bool holds_selection = false) {
    std::string shown = ui::elided_text(label, ImGui::GetContentRegionAvail().x - ImGui::GetTreeNodeToLabelSpacing());
    ImGui::TreeNodeEx(label.c_str(), leaf_flags(selected), "%s", shown.c_str());
    bool clicked = ImGui::IsItemClicked();
    if (shown.size() != label.size() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s %s", label.c_str(), count.c_str());
    if (!count.empty()) {
        ImGui::SameLine();
        ui::cell_text_dim(count);
    }
    if (holds_selection) {
        ImGui::SameLine();
        ui::text_colored(palette().accent, "\xE2\x97\x8F");  // ●
    }
    return clicked;
}

// A parent row that opens on its arrow; returns whether it is open and sets `clicked` when its
// label was clicked.
bool parent(const char* label, size_t count, bool& clicked) {
    ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_DefaultOpen | ImGuiTreeNodeFlags_SpanAvailWidth | ImGuiTreeNodeFlags_OpenOnArrow;
    bool open = ImGui::TreeNodeEx(label, flags);
    clicked = ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen();
    ImGui::SameLine();
    ui::text_dim("(" + std::to_string(count) + ")");
    return open;
}

void header_section(Document& doc) {
    const Model& m = *doc.model();
    bool selected = doc.selection.kind == SelectionKind::header;
    ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_DefaultOpen | ImGuiTreeNodeFlags_SpanAvailWidth | ImGuiTreeNodeFlags_OpenOnArrow |
        (selected ? ImGuiTreeNodeFlags_Selected : 0);
    bool open = ImGui::TreeNodeEx("Header", flags);
    if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) doc.select({SelectionKind::header, 0});
    if (!open) return;
    if (m.files.empty()) {
        ui::text_dim("no file");
    } else {
        const SourceFile& f = m.files[0];
        ui::label_value("format ", format_and_version(m.format, f.version));
        ui::label_value("endian ", f.big_endian ? "big (byte-swapped)" : "little");
        ui::label_value("align  ", std::to_string(f.alignment));
        ui::label_value("data   ", f.data_start_known() ? ui::hex_offset(f.data_start) : "not known");
        if (m.files.size() > 1) ui::label_value("files  ", std::to_string(m.files.size()));
    }
    if (m.partial) ui::text_colored(palette().error, "parsing stopped early");
    ImGui::TreePop();
}

}  // namespace

void NavigatorPanel::metadata_section(Document& doc) {
    const DocumentIndex& index = *doc.index();
    bool clicked = false;
    bool open = parent("Metadata###metadata", doc.model()->metadata.size(), clicked);
    if (clicked) doc.follow(metadata_group_link(index, std::nullopt));
    if (!open) return;
    bool key_selected = doc.selection.kind == SelectionKind::metadata;
    for (size_t g = 0; g < index.metadata_groups.size(); ++g) {
        const MetadataGroup& group = index.metadata_groups[g];
        bool holds = key_selected && std::find(group.entries.begin(), group.entries.end(), doc.selection.index) != group.entries.end();
        ImGui::PushID(static_cast<int>(g));
        if (leaf(group.label, "(" + std::to_string(group.entries.size()) + ")", m_metadata_group == g, holds))
            doc.follow(metadata_group_link(index, g));
        ImGui::PopID();
    }
    ImGui::TreePop();
}

void NavigatorPanel::tensor_section(Document& doc) {
    const DocumentIndex& index = *doc.index();
    bool clicked = false;
    bool open = parent("Tensors###tensors", index.tensors.size(), clicked);
    if (clicked) doc.follow(tensor_layer_link(index, std::nullopt));
    if (!open) return;
    if (index.layers.empty()) ui::text_dim("no tensors");
    bool tensor_selected = doc.selection.kind == SelectionKind::tensor;
    for (size_t l = 0; l < index.layers.size(); ++l) {
        const LayerSummary& layer = index.layers[l];
        std::string label = layer.layer ? "blk." + std::to_string(*layer.layer) : "non-block";
        bool holds = tensor_selected && std::find(layer.tensors.begin(), layer.tensors.end(), doc.selection.index) != layer.tensors.end();
        ImGui::PushID(static_cast<int>(l));
        if (leaf(label, std::to_string(layer.tensors.size()) + " \xC2\xB7 " + human_bytes(layer.bytes), m_tensor_layer == l, holds))
            doc.follow(tensor_layer_link(index, l));
        ImGui::PopID();
    }
    ImGui::TreePop();
}

namespace {

void tokenizer_section(Document& doc) {
    const TokenizerInfo& t = doc.index()->tokenizer;
    if (!t.tokens) return;
    std::string detail = ui::with_separators(t.count()) + " tokens";
    if (!t.model.empty()) detail += " \xC2\xB7 " + t.model;
    if (leaf("Tokenizer", detail, false)) doc.focus_panel = "tokenizer";
}

void diagnostics_section(Document& doc) {
    const Model& m = *doc.model();
    size_t warnings = m.warning_count(), errors = listed_error_count(m);
    ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_SpanAvailWidth | ImGuiTreeNodeFlags_OpenOnArrow |
        (m.diagnostics.empty() ? ImGuiTreeNodeFlags_Leaf : ImGuiTreeNodeFlags_DefaultOpen);
    bool open = ImGui::TreeNodeEx("Diagnostics###diagnostics", flags);
    if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen()) doc.focus_panel = "diagnostics";
    ImGui::SameLine();
    if (m.diagnostics.empty()) ui::text_colored(palette().ok, "none");
    if (warnings) {
        ui::text_colored(palette().warning, "\xE2\x9A\xA0 " + std::to_string(warnings));
        if (errors) ImGui::SameLine();
    }
    if (errors) ui::text_colored(palette().error, "\xE2\x9C\x96 " + std::to_string(errors));
    if (!open) return;
    // In the one listing order (truncation.h): a cut file's summary stands for its tensors' rows.
    const std::vector<ListedDiagnostic> listed = listed_diagnostics(m);
    size_t shown = std::min(listed.size(), kMaxListedDiagnostics);
    for (size_t r = 0; r < shown; ++r) {
        const size_t i = listed[r].diagnostic;
        const Diagnostic& d = m.diagnostics[i];
        ImGui::PushID(static_cast<int>(i));
        bool selected = doc.selection == Selection{SelectionKind::diagnostic, i};
        ImGui::PushStyleColor(ImGuiCol_Text, d.severity == Severity::error ? palette().error : palette().warning);
        std::string label = std::string(code_name(d.code));
        bool clicked = leaf(label, escape_for_display(d.field, 40), selected);
        ImGui::PopStyleColor();
        if (clicked) doc.select({SelectionKind::diagnostic, i}, "diagnostics");
        ImGui::PopID();
    }
    if (listed.size() > shown) ui::text_dim("\xE2\x80\xA6 " + std::to_string(listed.size() - shown) + " more");
    ImGui::TreePop();
}

}  // namespace

bool NavigatorPanel::accept_link(std::string_view link, Document& doc) {
    if (std::optional<LinkedIndex> group = parse_metadata_group_link(link, *doc.index())) {
        m_metadata_group = group->index;
        return true;
    }
    if (std::optional<LinkedIndex> layer = parse_tensor_layer_link(link, *doc.index())) {
        m_tensor_layer = layer->index;
        return true;
    }
    return false;
}

void NavigatorPanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    ImGui::BeginChild("outline", ImVec2(0, 0), false);
    header_section(doc);
    ImGui::Spacing();
    metadata_section(doc);
    ImGui::Spacing();
    tensor_section(doc);
    ImGui::Spacing();
    tokenizer_section(doc);
    ImGui::Spacing();
    diagnostics_section(doc);
    ImGui::EndChild();
}

}  // namespace mlens
