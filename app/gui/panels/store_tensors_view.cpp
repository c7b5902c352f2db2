#include "panels/store_tensors_view.h"

#include <algorithm>
#include <filesystem>
#include <span>

#include <imgui.h>

#include "mlens/model/logical_tensors.h"
#include "mlens/model/shape_text.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr uint64_t kMaxExpertsListed = 256;

std::string quant_text(const QuantLayout& q) {
    return q.type + " g" + std::to_string(q.group_size) + " \xC2\xB7 " + q.mode + " " + std::to_string(q.bits) + "-bit";
}

std::string companions_text(const Model& m, const QuantLayout& q) {
    std::string out;
    auto add = [&](const std::optional<size_t>& i, const char* what) {
        if (!i || *i >= m.tensors.size()) return;
        const TensorInfo& t = m.tensors[*i];
        out += (out.empty() ? "" : " + ") + std::string(what) + " " + t.type.name + " " + shape_text(t.ne, ShapeStyle::bracketed, shape_order(m.format));
    };
    add(q.scale, "scale");
    add(q.bias, "bias");
    add(q.global_scale, "global scale");
    return out;
}

const TensorInfo* find(const Model& m, const std::string& name) {
    for (const TensorInfo& t : m.tensors)
        if (t.name == name) return &t;
    return nullptr;
}

// The member of `g` that holds `part` for expert `e`: "<group>.<e>.<part>.weight" when stored
// per expert, else the stacked member whose name mentions the part.
const TensorInfo* member_for(const Model& m, const TensorGroup& g, uint64_t e, const std::string& part, bool& stacked) {
    stacked = false;
    if (const TensorInfo* t = find(m, g.name + "." + std::to_string(e) + "." + part + ".weight")) return t;
    for (size_t i : g.members) {
        const TensorInfo& t = m.tensors[i];
        if (t.name.find("." + part + ".") != std::string::npos) {
            stacked = true;
            return &t;
        }
    }
    return nullptr;
}

// The failed layer whose blob `t` was read from, matched by the digest in the blob's file name.
const FailedTensorLayer* failed_blob_of(const Model& m, const TensorInfo& t, const std::vector<FailedTensorLayer>& failed) {
    return t.file < m.files.size() ? failed_layer_of(failed, m.files[t.file].path) : nullptr;
}

void failure_cell(const FailedTensorLayer& f) {
    ui::text_colored(palette().error, "\xE2\x9C\x96 " + std::string(code_name(f.reason.code)));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(f.reason.field + ": " + f.reason.message, 400).c_str());
}

}  // namespace

void store_tensors_view(const Model& m, const std::vector<FailedTensorLayer>& failed, const FontSet& fonts) {
    const std::vector<LogicalTensor> tensors = logical_tensors(m);
    size_t quantized = 0;
    for (const LogicalTensor& t : tensors)
        if (t.folded()) ++quantized;
    const size_t companions = m.tensors.size() - tensors.size();
    std::vector<bool> shown_layer(failed.size(), false);
    size_t marked = 0;
    for (const LogicalTensor& lt : tensors)
        if (const FailedTensorLayer* f = failed_blob_of(m, m.tensors[lt.index], failed)) {
            shown_layer[static_cast<size_t>(f - failed.data())] = true;
            ++marked;
        }
    size_t unread = static_cast<size_t>(std::count(shown_layer.begin(), shown_layer.end(), false));
    ui::text_dim(plural(tensors.size(), "tensor") + " (" + std::to_string(quantized) + " quantized, " +
                 plural(companions, "scale/bias entry", "scale/bias entries") + " folded into them) in " + plural(m.files.size(), "file"));
    if (marked || unread)
        ui::text_colored(palette().error,
                         std::to_string(marked) + " tensors from damaged blobs, " + std::to_string(unread) +
                             " tensor layers not read (their rows are marked)");
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV |
        ImGuiTableFlags_ScrollX;
    size_t rows = tensors.size() + unread;
    float height =
        ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(std::min<size_t>(rows, 16) + 1) + ImGui::GetStyle().ScrollbarSize + 4;
    // Names and shapes first: each sized to its widest text (drawn in the mono font) and its
    // header (within a share of the width); the blob digest shows 12 of its digits (whole on
    // hover) and the status its word.
    const std::string stored_header = shape_header("Stored", shape_order(m.format));
    const std::string logical_header = shape_header("Logical shape", shape_order(m.format));
    std::vector<std::string> names, stored, quants, logical, companion_texts;
    for (const LogicalTensor& lt : tensors) {
        const TensorInfo& t = m.tensors[lt.index];
        names.push_back(escape_for_display(t.name, 160));
        stored.push_back(t.type.name + " " + shape_text(t.ne, ShapeStyle::bracketed, shape_order(m.format)));
        if (t.quant) quants.push_back(quant_text(*t.quant));
        companion_texts.push_back(t.quant ? companions_text(m, *t.quant) : std::string());
        logical.push_back(shape_text(lt.ne, ShapeStyle::bracketed, shape_order(m.format)));
    }
    const float avail = ImGui::GetContentRegionAvail().x;
    const float fitted_name_w = ui::fitted_width(names, "Name", avail * 0.45f);
    auto mono_fitted = [&](const std::vector<std::string>& texts, const std::string& header, float share) {
        ImGui::PushFont(fonts.mono());
        const float content = ui::fitted_width(texts, "", avail);
        ImGui::PopFont();
        return std::min(avail * share, std::max(content, ui::fitted_width(header, header.c_str(), avail)));
    };
    const float stored_w = mono_fitted(stored, stored_header, 0.2f);
    const float quant_w = mono_fitted(quants, "Quantization", 0.15f);
    const float logical_w = mono_fitted(logical, logical_header, 0.2f);
    const float blob_w = ui::fitted_width(short_digest("sha256-0123456789abcdef0123"), "Blob", avail * 0.15f);
    const float status_w = ui::fitted_width("\xE2\x9C\x96 E_BLOB_MISSING", "Status", avail * 0.12f);
    const float fitted_companions_w = mono_fitted(companion_texts, "Companions", 0.25f);
    // When they do not all fit, the companions (the last column, whole on hover) give up width
    // first, down to 8 em, then the name (it keeps its end), down to 14 em; beyond that the table
    // scrolls sideways.
    const float em = ImGui::GetFontSize();
    const float others = stored_w + quant_w + logical_w + blob_w + status_w + (ImGui::GetStyle().CellPadding.x * 2.0f + 1.0f) * 7.0f;
    const float companions_w = std::max(std::min(fitted_companions_w, avail - others - fitted_name_w), std::min(em * 8.0f, fitted_companions_w));
    const float name_w = std::max(std::min(fitted_name_w, avail - others - companions_w), em * 14.0f);
    if (!ImGui::BeginTable("store_tensors", 7, flags, ImVec2(0, height))) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    constexpr ImGuiTableColumnFlags fixed = ImGuiTableColumnFlags_WidthFixed;
    ui::table_columns({{"Name", fixed, name_w},
                       {stored_header.c_str(), fixed, stored_w},
                       {"Quantization", fixed, quant_w},
                       {logical_header.c_str(), fixed, logical_w},
                       {"Blob", fixed, blob_w},
                       {"Status", fixed, status_w},
                       {"Companions", fixed, companions_w}});
    for (size_t i = 0; i < failed.size(); ++i) {
        if (shown_layer[i]) continue;
        ImGui::TableNextRow();
        ImGui::PushID(static_cast<int>(m.tensors.size() + i));
        ImGui::TableNextColumn();
        ui::cell_text_colored(palette().error, escape_for_display(failed[i].name, 160));
        ImGui::TableNextColumn();
        ui::cell_text_dim("not read (" + failed[i].field + ")");
        for (int c = 0; c < 3; ++c) ImGui::TableNextColumn();
        ImGui::TableNextColumn();
        failure_cell(failed[i]);
        ImGui::PopID();
    }
    for (const LogicalTensor& lt : tensors) {
        const size_t i = lt.index;
        const TensorInfo& t = m.tensors[i];
        ImGui::TableNextRow();
        ImGui::PushID(static_cast<int>(i));
        ImGui::TableNextColumn();
        const size_t row = static_cast<size_t>(&lt - tensors.data());
        ui::cell_text(names[row], ui::Elide::start);
        ImGui::PushFont(fonts.mono());
        ImGui::TableNextColumn();
        ui::cell_text(stored[row]);
        ImGui::TableNextColumn();
        if (t.quant)
            ui::cell_text_colored(palette().accent, quant_text(*t.quant));
        else
            ui::text_dim("-");
        if (t.quant && ImGui::IsItemHovered() && !t.quant->origin.empty())
            ImGui::SetTooltip("%s", escape_for_display(t.quant->origin, 200).c_str());
        ImGui::TableNextColumn();
        ui::cell_text(logical[row]);
        ImGui::PopFont();
        ImGui::TableNextColumn();
        std::string blob = t.file < m.files.size() ? std::filesystem::path(m.files[t.file].path).filename().string() : "?";
        ui::text_dim(short_digest(escape_for_display(blob, 200)));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", escape_for_display(blob, 200).c_str());
        ImGui::TableNextColumn();
        if (const FailedTensorLayer* f = failed_blob_of(m, t, failed))
            failure_cell(*f);
        else
            ui::text_colored(palette().ok, "ok");
        ImGui::TableNextColumn();
        ImGui::PushFont(fonts.mono());
        if (t.quant) ui::cell_text_dim(companion_texts[row]);
        ImGui::PopFont();
        ImGui::PopID();
    }
    ImGui::EndTable();
}

void store_groups_view(const Model& m) {
    if (m.groups.empty()) {
        ui::text_dim("No expert groups.");
        return;
    }
    for (size_t g_i = 0; g_i < m.groups.size(); ++g_i) {
        const TensorGroup& g = m.groups[g_i];
        ImGui::PushID(static_cast<int>(g_i));
        std::string label = escape_for_display(g.name, 160) + "  \xC2\xB7 " + std::to_string(g.count) + " " + g.kind + " \xC3\x97 " +
            std::to_string(g.parts.size()) + " projections";
        bool open = ImGui::TreeNodeEx(label.c_str(), ImGuiTreeNodeFlags_SpanAvailWidth | (g_i == 0 ? ImGuiTreeNodeFlags_DefaultOpen : 0));
        if (open) {
            ui::text_dim("layout: " + escape_for_display(g.layout, 200));
            uint64_t shown = std::min(g.count, kMaxExpertsListed);
            for (uint64_t e = 0; e < shown; ++e) {
                ImGui::PushID(static_cast<int>(e));
                if (ImGui::TreeNodeEx(("expert " + std::to_string(e)).c_str(),
                                      ImGuiTreeNodeFlags_SpanAvailWidth | (e == 0 ? ImGuiTreeNodeFlags_DefaultOpen : 0))) {
                    for (const std::string& part : g.parts) {
                        bool stacked = false;
                        const TensorInfo* t = member_for(m, g, e, part, stacked);
                        std::string line = escape_for_display(part, 60) + "  ";
                        if (!t) {
                            ui::text_colored(palette().warning, line + "missing");
                            continue;
                        }
                        const std::vector<uint64_t>& logical = t->quant ? t->quant->logical_ne : t->ne;
                        // A stacked tensor holds every expert: its outermost dimension is not this one's.
                        const size_t dims = stacked && !logical.empty() ? logical.size() - 1 : logical.size();
                        line += shape_text(std::span(logical).first(dims), ShapeStyle::bracketed, shape_order(m.format));
                        if (t->quant) line += "  " + quant_text(*t->quant);
                        line += stacked ? "  (slice " + std::to_string(e) + " of " + escape_for_display(t->name, 120) + ")"
                                        : "  " + escape_for_display(t->name, 120);
                        ImGui::BulletText("%s", line.c_str());
                    }
                    ImGui::TreePop();
                }
                ImGui::PopID();
            }
            if (g.count > shown) ui::text_dim("\xE2\x80\xA6 " + std::to_string(g.count - shown) + " more experts");
            ImGui::TreePop();
        }
        ImGui::PopID();
    }
}

}  // namespace mlens
