#include "panels/safetensors_panel.h"

#include <algorithm>
#include <filesystem>
#include <span>

#include <imgui.h>

#include "mlens/analysis/tensor_listing.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/model/shape_text.h"
#include "mlens/text/escape.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

constexpr size_t kMaxTreeChildren = 4000;
constexpr uint64_t kMaxFileTextBytes = 4ull << 20;

std::string scalar_text(const nlohmann::ordered_json& j) {
    if (j.is_string()) return "\"" + escape_for_display(j.get_ref<const std::string&>(), 300) + "\"";
    return escape_for_display(j.dump(), 300);
}

// `open`: whether the node starts open (the root, and the entries of a small root).
void json_node(const std::string& key, const nlohmann::ordered_json& j, int depth, bool open) {
    if (!j.is_object() && !j.is_array()) {
        ImGui::TreeNodeEx(key.c_str(), ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen | ImGuiTreeNodeFlags_SpanAvailWidth);
        ImGui::SameLine();
        ui::text_colored(j.is_string() ? palette().ok : palette().accent, scalar_text(j));
        return;
    }
    std::string label = key + (j.is_object() ? "  {" + std::to_string(j.size()) + "}" : "  [" + std::to_string(j.size()) + "]");
    // A tensor entry tells its dtype and shape on its own line.
    if (j.is_object() && j.contains("dtype") && j["dtype"].is_string() && j.contains("shape"))
        label += "  " + escape_for_display(j["dtype"].get_ref<const std::string&>(), 20) + " " + escape_for_display(j["shape"].dump(), 80);
    // Small arrays (shapes, data_offsets) read best on one line.
    if (j.is_array() && j.size() <= 8 && std::none_of(j.begin(), j.end(), [](const auto& e) { return e.is_structured(); })) {
        ImGui::TreeNodeEx(key.c_str(), ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen | ImGuiTreeNodeFlags_SpanAvailWidth);
        ImGui::SameLine();
        ui::text_colored(palette().accent, escape_for_display(j.dump(), 300));
        return;
    }
    ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_SpanAvailWidth | (open ? ImGuiTreeNodeFlags_DefaultOpen : 0);
    bool open_children = depth == 0 && j.size() <= 32;
    if (!ImGui::TreeNodeEx(label.c_str(), flags)) return;
    size_t n = 0;
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end() && n < kMaxTreeChildren; ++it, ++n) {
            ImGui::PushID(static_cast<int>(n));
            json_node(escape_for_display(it.key(), 200), it.value(), depth + 1, open_children);
            ImGui::PopID();
        }
    } else {
        for (; n < j.size() && n < kMaxTreeChildren; ++n) {
            ImGui::PushID(static_cast<int>(n));
            json_node("[" + std::to_string(n) + "]", j[n], depth + 1, open_children);
            ImGui::PopID();
        }
    }
    if (j.size() > n) ui::text_dim("\xE2\x80\xA6 " + std::to_string(j.size() - n) + " more (see the table)");
    ImGui::TreePop();
}

}  // namespace

std::vector<uint32_t> safetensors_shards(const Model& model) {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < model.files.size(); ++i)
        if (model.files[i].data_start >= 8) out.push_back(i);
    return out;
}

std::vector<size_t> side_file_entries(const Model& model) {
    std::vector<size_t> out;
    for (size_t i = 0; i < model.metadata.size(); ++i)
        if (model.metadata[i].key.starts_with("file:")) out.push_back(i);
    return out;
}

std::string SafetensorsPanel::badge(const Document& doc) const {
    size_t shards = safetensors_shards(*doc.model()).size();
    return shards > 1 ? std::to_string(shards) + " shards" : std::string();
}

void SafetensorsPanel::table_view(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const Model& m = *doc.model();
    ui::search_box("st_filter", "filter tensor names", m_filter, 320);
    std::vector<size_t> rows;
    for (size_t i = 0; i < m.tensors.size(); ++i)
        if (m_filter.empty() || m.tensors[i].name.find(m_filter) != std::string::npos) rows.push_back(i);
    ImGui::SameLine();
    ui::text_dim(std::to_string(rows.size()) + " / " + std::to_string(m.tensors.size()) + " tensors");
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV |
        ImGuiTableFlags_Hideable;
    // Names first: the name column is sized to the longest listed name, the shape to the widest
    // shape; data_offsets takes what is left (its numbers cut with "…", whole on hover).
    float avail = ImGui::GetContentRegionAvail().x;
    std::vector<std::string> shards;
    for (const auto& f : m.files) shards.push_back(escape_for_display(base_name(f.path), 200));
    std::string widest_name, widest_shape;  // of the first rows: measuring is per frame
    for (size_t i : std::span(rows).first(std::min<size_t>(rows.size(), 4096))) {
        if (m.tensors[i].name.size() > widest_name.size()) widest_name = escape_for_display(m.tensors[i].name, 160);
        std::string shape = shape_text(m.tensors[i].ne, ShapeStyle::bracketed, shape_order(m.format));
        if (shape.size() > widest_shape.size()) widest_shape = std::move(shape);
    }
    const std::string shape_title = shape_header("Shape", shape_order(m.format));
    ImGui::PushFont(ctx.fonts.mono());
    const float shape_w = ui::fitted_width(widest_shape, shape_title.c_str(), avail * 0.2f);
    const float offsets_min = ui::fitted_width("[0, 0)", "data_offsets", avail);
    const float size_w = ui::fitted_width("999.9 MB", "Size", avail);
    ImGui::PopFont();
    const float dtype_w = ui::fitted_width("BF16", "dtype", avail);
    const float shard_w = ui::fitted_width(shards, "Shard", avail * 0.2f);
    const float name_w = std::min(ui::fitted_width(widest_name, "Name", avail), avail - dtype_w - shape_w - offsets_min - size_w - shard_w);
    if (!ImGui::BeginTable("st_tensors", 6, flags)) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthFixed, std::max(name_w, avail * 0.25f));
    ImGui::TableSetupColumn("dtype", ImGuiTableColumnFlags_WidthFixed, dtype_w);
    ImGui::TableSetupColumn(shape_title.c_str(), ImGuiTableColumnFlags_WidthFixed, shape_w);
    ImGui::TableSetupColumn("data_offsets", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed, size_w);
    ImGui::TableSetupColumn("Shard", ImGuiTableColumnFlags_WidthFixed, shard_w);
    ImGui::TableHeadersRow();
    ui::clipped_rows(rows, [&](size_t i) {
        const TensorInfo& t = m.tensors[i];
        ImGui::TableNextColumn();
        bool selected = doc.selection == Selection{SelectionKind::tensor, i};
        if (ui::cell_selectable(escape_for_display(t.name, 160), selected, ImGuiSelectableFlags_SpanAllColumns, ui::Elide::start))
            doc.select({SelectionKind::tensor, i});
        ui::copy_menu("copy", {{"name", t.name}});
        ImGui::TableNextColumn();
        ui::text_colored(t.type.known ? palette().accent : palette().error, t.type.name);
        ImGui::PushFont(ctx.fonts.mono());
        ImGui::TableNextColumn();
        ui::text(shape_text(t.ne, ShapeStyle::bracketed, shape_order(m.format)));
        ImGui::TableNextColumn();
        ui::cell_text("[" + std::to_string(t.relative_offset) + ", " +
                      (t.n_bytes ? std::to_string(t.relative_offset + *t.n_bytes) : std::string("?")) + ")");
        ImGui::TableNextColumn();
        ui::text(t.n_bytes ? human_bytes(*t.n_bytes) : "?");
        ImGui::PopFont();
        ImGui::TableNextColumn();
        std::string shard = t.file < m.files.size() ? base_name(m.files[t.file].path) : "?";
        ui::cell_text_dim(escape_for_display(shard, 200));
    });
    ImGui::EndTable();
}

void SafetensorsPanel::tree_view(PanelContext& ctx) {
    const Model& m = *ctx.doc.model();
    std::vector<uint32_t> shards = safetensors_shards(m);
    if (shards.empty()) return;
    if (m_tree_shard == UINT32_MAX || std::find(shards.begin(), shards.end(), m_tree_shard) == shards.end()) {
        m_tree_shard = shards[0];
        m_tree.reset();
        m_tree_error.clear();
    }
    if (shards.size() > 1) {
        ImGui::SetNextItemWidth(360);
        std::string current = escape_for_display(base_name(m.files[m_tree_shard].path), 80);
        if (ImGui::BeginCombo("shard", current.c_str())) {
            for (uint32_t s : shards)
                if (ImGui::Selectable(escape_for_display(base_name(m.files[s].path), 80).c_str(), s == m_tree_shard)) {
                    m_tree_shard = s;
                    m_tree.reset();
                    m_tree_error.clear();
                }
            ImGui::EndCombo();
        }
    }
    const SourceFile& f = m.files[m_tree_shard];
    uint64_t header = f.data_start - 8;
    ui::text_dim("header: " + ui::with_separators(header) + " bytes of JSON at offset 8");
    if (!m_tree && m_tree_error.empty()) {
        if (header > kMaxTreeHeaderBytes) {
            m_tree_error = "the header is larger than " + human_bytes(kMaxTreeHeaderBytes) + "; the table shows every tensor";
        } else {
            std::vector<uint8_t> bytes = read_file_bytes(m, m_tree_shard, 8, header);
            auto j = nlohmann::ordered_json::parse(bytes.begin(), bytes.end(), nullptr, false);
            if (j.is_discarded())
                m_tree_error = "the header is not valid JSON (see Diagnostics)";
            else
                m_tree = std::make_unique<nlohmann::ordered_json>(std::move(j));
        }
    }
    ImGui::BeginChild("st_tree", ImVec2(0, 0), false);
    if (m_tree)
        json_node("header", *m_tree, 0, true);
    else
        ui::text_colored(palette().warning, m_tree_error);
    ImGui::EndChild();
}

void SafetensorsPanel::metadata_view(const Document& doc) {
    const Model& m = *doc.model();
    std::vector<size_t> entries;
    for (size_t i = 0; i < m.metadata.size(); ++i)
        if (!m.metadata[i].key.starts_with("file:")) entries.push_back(i);
    if (entries.empty()) {
        ui::text_dim("The header has no __metadata__ entries.");
        return;
    }
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV;
    if (!ImGui::BeginTable("st_metadata", 3, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Key", ImGuiTableColumnFlags_WidthStretch, 1.5f);
    ImGui::TableSetupColumn("Value", ImGuiTableColumnFlags_WidthStretch, 3.0f);
    ImGui::TableSetupColumn("Shard", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableHeadersRow();
    for (size_t i : entries) {
        const MetadataEntry& e = m.metadata[i];
        ImGui::TableNextRow();
        ImGui::PushID(static_cast<int>(i));
        ImGui::TableNextColumn();
        ui::text(escape_for_display(e.key, 200));
        ImGui::TableNextColumn();
        std::string value = e.value.is_string() ? e.value.string_value(4096) : std::string("(not a string)");
        ui::text(escape_for_display(value, 400));
        ui::copy_menu("copy", {{"key", e.key}, {"value", value}});
        ImGui::TableNextColumn();
        ui::text_dim(e.file < m.files.size() ? escape_for_display(base_name(m.files[e.file].path), 60) : "?");
        ImGui::PopID();
    }
    ImGui::EndTable();
}

void SafetensorsPanel::files_view(PanelContext& ctx) {
    const Model& m = *ctx.doc.model();
    std::vector<size_t> files = side_file_entries(m);
    if (files.empty()) {
        ui::text_dim("No JSON files beside the weights.");
        return;
    }
    if (m_file >= files.size()) m_file = 0;
    ImGui::BeginChild("st_files", ImVec2(260, 0), true);
    for (size_t k = 0; k < files.size(); ++k) {
        const MetadataEntry& e = m.metadata[files[k]];
        std::string label = escape_for_display(e.key.substr(5), 80) + "##" + std::to_string(k);
        if (ImGui::Selectable(label.c_str(), k == m_file)) m_file = k;
        ImGui::SameLine(200);
        ui::text_dim(human_bytes(e.value_range.length));
    }
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("st_file_text", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    const MetadataEntry& e = m.metadata[files[m_file]];
    std::string text = e.value.string_value(kMaxFileTextBytes);
    ImGui::PushFont(ctx.fonts.mono());
    // Line by line so long files stay cheap: only the visible lines are drawn.
    std::vector<std::string_view> lines;
    for (size_t start = 0; start <= text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        lines.emplace_back(text.data() + start, end - start);
        start = end + 1;
    }
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(lines.size()));
    while (clipper.Step())
        for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) ui::text(escape_for_display(lines[static_cast<size_t>(i)], 2000));
    ImGui::PopFont();
    if (e.value_range.length > kMaxFileTextBytes) ui::text_dim("\xE2\x80\xA6 the first " + human_bytes(kMaxFileTextBytes) + " shown");
    ImGui::EndChild();
}

void SafetensorsPanel::draw(PanelContext& ctx) {
    if (!ImGui::BeginTabBar("st_views")) return;
    auto flags = [&](View v) { return m_pending == v ? ImGuiTabItemFlags_SetSelected : 0; };
    std::string files = "JSON files (" + std::to_string(side_file_entries(*ctx.doc.model()).size()) + ")###files";
    if (ImGui::BeginTabItem("Tensors", nullptr, flags(View::tensors))) {
        table_view(ctx);
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Header tree", nullptr, flags(View::tree))) {
        tree_view(ctx);
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("__metadata__", nullptr, flags(View::metadata))) {
        metadata_view(ctx.doc);
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem(files.c_str(), nullptr, flags(View::files))) {
        files_view(ctx);
        ImGui::EndTabItem();
    }
    m_pending.reset();
    ImGui::EndTabBar();
}

}  // namespace mlens
