#include "panels/tensor_panel.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/analysis/tensor_table_export.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/model/shape_text.h"
#include "mlens/model/truncation.h"
#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "mlens/text/plural.h"
#include "panels/panel_links.h"
#include "state/output_inputs.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr TensorColumn kColumns[] = {TensorColumn::file_order, TensorColumn::name, TensorColumn::type,   TensorColumn::shape,
                                     TensorColumn::elements,   TensorColumn::size, TensorColumn::offset, TensorColumn::bits_per_weight};

std::string bpw_text(double bpw) { return bpw > 0.0 ? bits_per_weight_text(bpw) : "-"; }

std::string join_types(const std::vector<std::string>& types) {
    std::string out;
    for (const std::string& t : types) out += (out.empty() ? "" : ", ") + escape_for_display(t, 60);
    return out;
}

}  // namespace

void TensorPanel::draw_toolbar(Document& doc, const Workspace* workspace) {
    bool focus = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && ui::ctrl_pressed('F');
    ui::search_box("filter", m_query.regex ? "regex, e.g. blk\\.1[0-9]\\..*attn" : "filter names (Ctrl+F)", m_query.text, 340, focus);
    ImGui::SameLine();
    ImGui::Checkbox("Regex", &m_query.regex);
    ImGui::SameLine();
    ImGui::Checkbox("By layer", &m_query.by_layer);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Group rows under one summary row per layer");
    ImGui::SameLine();
    if (ImGui::SmallButton("Export\xE2\x80\xA6")) ImGui::OpenPopup("tensor_export");
    draw_export(doc, workspace);
    const auto& layers = doc.index()->layers;
    if (m_query.layer && *m_query.layer < layers.size()) {
        ImGui::SameLine();
        const LayerSummary& l = layers[*m_query.layer];
        std::string chip = "layer: " + (l.layer ? "blk." + std::to_string(*l.layer) : std::string("non-block")) + "  \xE2\x9C\x95";
        if (ImGui::SmallButton(chip.c_str())) doc.follow(tensor_layer_link(*doc.index(), std::nullopt));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show all layers");
    }
    if (!m_listing_error.empty()) ui::text_colored(palette().error, "invalid regex: " + m_listing_error);
}

void TensorPanel::fit_columns(const Document& doc, ImFont* mono) {
    const Model& m = *doc.model();
    std::string type = "Type", shape, elements, offset = ui::hex_offset(0);
    m_shape_header = shape_header("Shape", shape_order(m.format));
    for (size_t i = 0; i < std::min<size_t>(doc.index()->tensors.size(), 100000); ++i) {
        const LogicalTensor& lt = doc.index()->tensors[i];
        if (lt.type.size() > type.size()) type = escape_for_display(lt.type, 60);
        std::string s = shape_text(lt.ne, ShapeStyle::times, shape_order(m.format));
        if (s.size() > shape.size()) shape = s;
        s = ui::with_separators(lt.elements);
        if (s.size() > elements.size()) elements = s;
        s = ui::hex_offset(m.tensors[lt.index].data_offset);
        if (s.size() > offset.size()) offset = s;
    }
    m_fitted.push_back(ui::fitted_width(std::to_string(doc.index()->tensors.size()) + "0", "#", 1e6f));
    m_fitted.push_back(ui::fitted_width(type, "Type", 1e6f));
    ImGui::PushFont(mono);
    const std::pair<std::string, const char*> columns[] = {
        {shape, m_shape_header.c_str()}, {elements, "Elements"}, {"999.9 MB", "Size"}, {offset, "Offset"}, {"16.000", "BPW"}};
    for (const auto& [widest, header] : columns) m_fitted.push_back(ui::fitted_width(widest, header, 1e6f));
    ImGui::PopFont();
}

// `avail`: the panel's width before the table began.
void TensorPanel::setup_columns(float avail) {
    const ImGuiTableColumnFlags fixed = ImGuiTableColumnFlags_WidthFixed;
    ImGui::TableSetupColumn("#", fixed | ImGuiTableColumnFlags_DefaultSort, m_fitted[0]);
    ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("Type", fixed, std::min(m_fitted[1], avail * 0.15f));
    ImGui::TableSetupColumn(m_shape_header.c_str(), fixed, std::min(m_fitted[2], avail * 0.2f));
    ImGui::TableSetupColumn("Elements", fixed, m_fitted[3]);
    ImGui::TableSetupColumn("Size", fixed, m_fitted[4]);
    ImGui::TableSetupColumn("Offset", fixed, m_fitted[5]);
    ImGui::TableSetupColumn("BPW", fixed, m_fitted[6]);
    ImGui::TableHeadersRow();
}

void TensorPanel::apply_sort_specs() {
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs()) {
        if (specs->SpecsCount > 0) {
            const ImGuiTableColumnSortSpecs& s = specs->Specs[0];
            m_query.sort = kColumns[std::min<int>(s.ColumnIndex, 7)];
            m_query.descending = s.SortDirection == ImGuiSortDirection_Descending;
        } else {
            m_query.sort = TensorColumn::file_order;
            m_query.descending = false;
        }
        specs->SpecsDirty = false;
    }
}

// Brings a tensor selected elsewhere into view.
void TensorPanel::scroll_to_selection(const Document& doc, float row_h) {
    bool selected_elsewhere = doc.selection != m_last_selection && doc.selection.kind == SelectionKind::tensor;
    m_last_selection = doc.selection;
    if (selected_elsewhere) {
        for (size_t r = 0; r < m_listing.rows.size(); ++r) {
            if (!m_listing.rows[r].layer_row && doc.index()->tensors[m_listing.rows[r].index].index == doc.selection.index) {
                float y = static_cast<float>(r) * row_h;
                if (y < ImGui::GetScrollY() || y > ImGui::GetScrollY() + ImGui::GetWindowHeight() - 3 * row_h)
                    ImGui::SetScrollY(std::max(0.0f, y - ImGui::GetWindowHeight() * 0.3f));
                break;
            }
        }
    }
}

// A layer's summary row; clicking it collapses or expands the layer.
void TensorPanel::draw_layer_row(const Document& doc, const TensorRow& row) {
    const LayerSummary& l = doc.index()->layers[row.index];
    const TensorTotals& t = m_listing.layer_totals[row.index];
    bool collapsed = m_query.collapsed.count(row.index) > 0;
    ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, ImGui::GetColorU32(ImGuiCol_TableHeaderBg));
    ImGui::TableNextColumn();
    std::string label = std::string(collapsed ? "\xE2\x96\xB8" : "\xE2\x96\xBE");
    if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) {
        if (collapsed)
            m_query.collapsed.erase(row.index);
        else
            m_query.collapsed.insert(row.index);
    }
    ImGui::TableNextColumn();
    ui::text_colored(palette().accent, l.layer ? "blk." + std::to_string(*l.layer) : "non-block");
    ImGui::TableNextColumn();
    ui::text_dim(join_types(l.types));
    ImGui::TableNextColumn();
    ui::text_dim(plural(t.count, "tensor"));
    ImGui::TableNextColumn();
    ui::text(human_count(t.elements));
    ImGui::TableNextColumn();
    ui::text(human_bytes(t.bytes));
    ImGui::TableNextColumn();
    ImGui::TableNextColumn();
    ui::text(bpw_text(t.bits_per_weight()));
}

void TensorPanel::draw_tensor_row(Document& doc, const TensorRow& row, ImFont* mono) {
    const Model& m = *doc.model();
    const LogicalTensor& lt = doc.index()->tensors[row.index];
    const TensorInfo& t = m.tensors[lt.index];
    bool selected = doc.selection == Selection{SelectionKind::tensor, lt.index};
    ImGui::TableNextColumn();
    ImGui::PushStyleColor(ImGuiCol_Text, palette().dim);
    // Numbered in logical order: a tensor's scale and bias take no numbers of their own.
    if (ImGui::Selectable(std::to_string(row.index).c_str(), selected,
                          ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap)) {
        doc.select({SelectionKind::tensor, lt.index});
        m_last_selection = doc.selection;
    }
    ImGui::PopStyleColor();
    std::string name = escape_for_display(t.name, 120);
    ui::copy_menu("copy", {{"name", t.name}, {"offset", std::to_string(t.data_offset)}});
    ImGui::TableNextColumn();
    if (m_query.by_layer) ImGui::Indent(8);
    ui::cell_text(name, ui::Elide::start);
    if (std::string experts = expert_text(m, lt); !experts.empty()) {
        // Long names clip the suffix; the tooltip keeps the group readable.
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s\n%s in %s", name.c_str(), experts.c_str(),
                              escape_for_display(m.groups[*lt.group].name, 200).c_str());
        ImGui::SameLine();
        ui::text_dim("\xC2\xB7 " + experts);
    }
    if (m_query.by_layer) ImGui::Unindent(8);
    ImGui::TableNextColumn();
    ui::cell_text_colored(t.type.known ? palette().accent : palette().error, escape_for_display(lt.type, 60));
    if (lt.folded() && ImGui::IsItemHovered())
        ImGui::SetTooltip("stored as %s", escape_for_display(stored_as_text(m, lt), 400).c_str());
    ImGui::PushFont(mono);
    ImGui::TableNextColumn();
    ui::cell_text(shape_text(lt.ne, ShapeStyle::times, shape_order(m.format)));
    ImGui::TableNextColumn();
    ui::text(ui::with_separators(lt.elements));
    ImGui::TableNextColumn();
    draw_size_cell(m, lt);
    ImGui::TableNextColumn();
    // An offset that was never read is not shown as one.
    if (t.presence == DataPresence::unknown)
        ui::text_dim("?");
    else
        ui::text_dim(ui::hex_offset(t.data_offset));
    ImGui::TableNextColumn();
    ui::text(bpw_text(lt.bits_per_weight()));
    ImGui::PopFont();
}

// The size cell: the bytes, or what is left of them when the file ends before the tensor's data does.
void TensorPanel::draw_size_cell(const Model& m, const LogicalTensor& lt) {
    if (const DataPresence presence = data_presence(m, lt); presence == DataPresence::complete) {
        ui::text(lt.bytes ? human_bytes(*lt.bytes) : "?");
    } else {
        // The file ends before this tensor's data does (truncation.h): the row is tinted and
        // the size cell names what is left.
        ImVec4 tint = palette().error;
        tint.w = 0.15f;
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, ImGui::GetColorU32(tint));
        ui::text_colored(palette().error, data_presence_name(presence));
        if (ImGui::IsItemHovered()) {
            const std::string size = human_bytes(lt.bytes.value_or(0));
            const std::string tip = presence == DataPresence::missing ? "none of this tensor's " + size + " is in the file"
                : presence == DataPresence::unknown
                ? "the tensor-info list is cut before its end: where this tensor's data lies is not known"
                : "the file ends inside this tensor's " + size;
            ImGui::SetTooltip("%s", tip.c_str());
        }
    }
}

void TensorPanel::draw_table(PanelContext& ctx) {
    Document& doc = ctx.doc;
    float totals_h = ImGui::GetTextLineHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV |
        ImGuiTableFlags_Sortable | ImGuiTableFlags_SortTristate | ImGuiTableFlags_Hideable | ImGuiTableFlags_Reorderable;
    // Every column but the name sized to its content; the name takes the rest.
    ImFont* mono = ctx.fonts.mono();
    if (m_fitted.empty()) fit_columns(doc, mono);
    float avail = ImGui::GetContentRegionAvail().x;
    if (!ImGui::BeginTable("tensors", 8, flags, ImVec2(0, -totals_h))) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    setup_columns(avail);
    apply_sort_specs();
    if (!m_built || !(m_query == m_applied)) {
        Result<TensorListing> listing = list_tensors(*doc.model(), *doc.index(), m_query);
        m_listing_error = listing ? std::string() : listing.error().message;
        m_listing = listing ? std::move(*listing) : TensorListing{};
        m_applied = m_query;
        m_built = true;
    }
    float row_h = ImGui::GetTextLineHeightWithSpacing();
    scroll_to_selection(doc, row_h);

    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(m_listing.rows.size()), row_h);
    while (clipper.Step()) {
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            const TensorRow& row = m_listing.rows[static_cast<size_t>(r)];
            ImGui::TableNextRow();
            ImGui::PushID(r);
            if (row.layer_row)
                draw_layer_row(doc, row);
            else
                draw_tensor_row(doc, row, mono);
            ImGui::PopID();
        }
    }
    ImGui::EndTable();
}

void TensorPanel::draw_export(const Document& doc, const Workspace* workspace) {
    if (!ImGui::BeginPopup("tensor_export")) return;
    if (m_export_path.empty()) {
        const char* home = std::getenv("HOME");
        std::string stem = std::filesystem::path(doc.path).stem().string();
        m_export_path = (std::filesystem::path(home ? home : ".") / (stem.empty() ? "tensors" : stem + ".tensors")).string();
    }
    const size_t listed = static_cast<size_t>(m_listing.totals.count);
    ui::text(ui::with_separators(listed) + " listed tensors, in the table's order");
    constexpr TensorExportFormat kFormats[] = {TensorExportFormat::csv, TensorExportFormat::markdown, TensorExportFormat::json};
    constexpr const char* kNames[] = {"CSV", "Markdown", "JSON"};
    for (size_t i = 0; i < 3; ++i) {
        if (i) ImGui::SameLine();
        if (ImGui::Button(("Copy " + std::string(kNames[i])).c_str())) {
            ImGui::SetClipboardText(export_tensors(*doc.model(), doc.index()->tensors, m_listing, kFormats[i]).c_str());
            m_export_status = std::string(kNames[i]) + " copied to the clipboard";
        }
    }
    ImGui::SetNextItemWidth(420);
    ImGui::InputText("file (no extension)", &m_export_path);
    for (size_t i = 0; i < 3; ++i) {
        if (i) ImGui::SameLine();
        if (ImGui::Button(("Save " + std::string(kNames[i])).c_str())) {
            const std::string path = m_export_path + "." + tensor_export_extension(kFormats[i]);
            const std::string text = export_tensors(*doc.model(), doc.index()->tensors, m_listing, kFormats[i]);
            OutputGuard guard = gui_output_guard(&doc, workspace);
            Status st = write_files_safely(guard, {{path, text.data(), text.size()}});
            m_export_status = st ? "wrote " + escape_for_display(path, 200) : "not written: " + st.error().to_string();
        }
    }
    if (!m_export_status.empty()) ui::text_dim(m_export_status);
    ImGui::EndPopup();
}

void TensorPanel::draw_totals(const Document& doc) {
    const TensorTotals& t = m_listing.totals;
    const ModelSummary& s = doc.index()->summary;
    std::string stored =
        s.stored_tensor_count == s.tensor_count ? std::string() : " (" + ui::with_separators(s.stored_tensor_count) + " stored entries)";
    std::string line = "\xCE\xA3 " + ui::with_separators(t.count) + " of " + counted_as(ui::with_separators(doc.index()->tensors.size()), doc.index()->tensors.size(), "tensor") +
        stored + " \xC2\xB7 " + human_count(t.elements) + " parameters \xC2\xB7 " + human_bytes(t.bytes) + " \xC2\xB7 " +
        bpw_text(t.bits_per_weight()) + " bits/weight";
    ui::text_dim(line);
    const Model& model = *doc.model();
    auto count_of = [&](DataPresence p) {
        return static_cast<uint64_t>(
            std::count_if(model.tensors.begin(), model.tensors.end(), [p](const TensorInfo& x) { return x.presence == p; }));
    };
    // Tensors whose data lies past the end of their file: a file cut short, or offsets that point
    // past the end of a file that holds all its data (truncation.h).
    uint64_t cut = 0, misplaced = 0;
    std::vector<int8_t> past_end(model.files.size(), -1);  // per file, asked once a frame
    for (const TensorInfo& x : model.tensors) {
        if (x.presence != DataPresence::partial && x.presence != DataPresence::missing) continue;
        if (x.file < past_end.size() && past_end[x.file] < 0) past_end[x.file] = offsets_past_end(model, x.file) ? 1 : 0;
        ++(x.file < past_end.size() && past_end[x.file] == 1 ? misplaced : cut);
    }
    auto tensors_text = [](uint64_t n) { return counted_as(ui::with_separators(n), n, "tensor"); };
    if (cut > 0) {
        ImGui::SameLine();
        ui::text_colored(palette().error, "\xC2\xB7 " + tensors_text(cut) + " missing data (the file is cut short)");
    }
    if (misplaced > 0) {
        ImGui::SameLine();
        ui::text_colored(palette().error, "\xC2\xB7 " + tensors_text(misplaced) + " placed past the file's end (wrong offsets)");
    }
    if (const uint64_t unknown = count_of(DataPresence::unknown); unknown > 0) {
        ImGui::SameLine();
        ui::text_colored(palette().error, "\xC2\xB7 " + tensors_text(unknown) + " not located (tensor infos cut)");
    }
}

bool TensorPanel::accept_link(std::string_view link, Document& doc) {
    std::optional<LinkedIndex> layer = parse_tensor_layer_link(link, *doc.index());
    if (layer) m_query.layer = layer->index;
    return layer.has_value();
}

void TensorPanel::draw(PanelContext& ctx) {
    draw_toolbar(ctx.doc, ctx.workspace);
    draw_table(ctx);
    draw_totals(ctx.doc);
}

}  // namespace mlens
