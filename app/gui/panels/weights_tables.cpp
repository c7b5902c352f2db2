#include "panels/weights_tables.h"

#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

// A label cell and its value cell.
void cells(const char* label, const std::string& value, const ImVec4* color = nullptr) {
    ImGui::TableNextColumn();
    ui::text_dim(label);
    ImGui::TableNextColumn();
    if (color) ui::text_colored(*color, value);
    else ui::text(value);
    ui::copy_menu(label, {{"value", value}});
}

void row(const char* label, const std::string& value, const ImVec4* color = nullptr) {
    ImGui::TableNextRow();
    cells(label, value, color);
}

std::string count_and_share(uint64_t n, uint64_t total) {
    std::string s = ui::with_separators(n);
    if (total && n) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "  (%.3g%%)", 100.0 * static_cast<double>(n) / static_cast<double>(total));
        s += buf;
    }
    return s;
}

bool begin_table(const char* id) {
    if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) return false;
    ImGui::TableSetupColumn("label", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("mean |a-b|").x + 8);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    return true;
}

}  // namespace

std::string number_text(double v) {
    if (std::isnan(v)) return "-";
    if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

void weights_stats_table(const TensorStats& s) {
    if (!begin_table("stats")) return;
    row("count", ui::with_separators(s.count));
    row("zeros", count_and_share(s.zeros, s.count));
    row("NaN", count_and_share(s.nan, s.count), s.nan ? &palette().error : nullptr);
    row("\xC2\xB1Inf", count_and_share(s.inf, s.count), s.inf ? &palette().error : nullptr);
    row("min", number_text(s.min));
    row("max", number_text(s.max));
    row("mean", number_text(s.mean));
    row("std", number_text(s.std));
    row("mean |x|", number_text(s.mean_abs));
    row("kurtosis", number_text(s.kurtosis));
    for (size_t i = 0; i < TensorStats::kPercentiles.size(); ++i) {
        char label[24];
        std::snprintf(label, sizeof label, "p%g", TensorStats::kPercentiles[i]);
        row(label, number_text(s.percentiles[i]));
    }
    ImGui::EndTable();
}

void weights_brief_stats_table(const char* id, const TensorStats& s) {
    // Two label-value pairs a row, so the section stays short under the main statistics.
    if (!ImGui::BeginTable(id, 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) return;
    const float label_width = ImGui::CalcTextSize("\xC2\xB1Inf").x + 8;
    for (int pair = 0; pair < 2; ++pair) {
        ImGui::TableSetupColumn("label", ImGuiTableColumnFlags_WidthFixed, label_width);
        ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    }
    ImGui::TableNextRow();
    cells("count", ui::with_separators(s.count));
    cells("zeros", count_and_share(s.zeros, s.count));
    ImGui::TableNextRow();
    cells("min", number_text(s.min));
    cells("max", number_text(s.max));
    ImGui::TableNextRow();
    cells("mean", number_text(s.mean));
    cells("std", number_text(s.std));
    if (s.nan || s.inf) {
        ImGui::TableNextRow();
        cells("NaN", count_and_share(s.nan, s.count), s.nan ? &palette().error : nullptr);
        cells("\xC2\xB1Inf", count_and_share(s.inf, s.count), s.inf ? &palette().error : nullptr);
    }
    ImGui::EndTable();
}

void weights_compare_table(const WeightsResult& r, const std::string& other_title) {
    ui::text_colored(palette().accent, "vs " + other_title);
    if (!r.compare_error.empty()) {
        ImGui::PushTextWrapPos(0);
        ui::text_colored(palette().error, r.compare_error);
        ImGui::PopTextWrapPos();
        return;
    }
    if (!r.compared) return;
    const TensorComparison& c = r.comparison;
    if (!begin_table("compare")) return;
    row("RMSE", number_text(c.rmse));
    row("NMSE", number_text(c.nmse));
    row("max |a-b|", number_text(c.max_abs));
    row("mean |a-b|", number_text(c.mean_abs));
    row("cosine", number_text(c.cosine));
    row("SNR dB", number_text(c.snr_db));
    row("non-finite", ui::with_separators(c.nonfinite), c.nonfinite ? &palette().warning : nullptr);
    for (const RowError& w : c.worst_rows) {
        std::string label = "row " + std::to_string(w.row);
        char text[64];
        std::snprintf(text, sizeof text, "rmse %.3g  max %.3g", w.rmse, w.max_abs);
        row(label.c_str(), text);
    }
    ImGui::EndTable();
}

void weights_values_table(const WeightsResult& r, uint64_t rows_total, const FontSet& fonts) {
    if (r.first_values.empty()) return;
    size_t cols = 0;
    for (const auto& v : r.first_values) cols = std::max(cols, v.size());
    ui::text_dim("first " + std::to_string(r.first_values.size()) + " of " + ui::with_separators(rows_total) +
                 " rows \xC2\xB7 first " + std::to_string(cols) + " of " + ui::with_separators(r.row_length) +
                 " values per row (ne[0])");
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollX |
                            ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("values", static_cast<int>(cols) + 1, flags, ImVec2(0, 0))) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("row");
    for (size_t c = 0; c < cols; ++c) ImGui::TableSetupColumn(std::to_string(c).c_str());
    ImGui::TableHeadersRow();
    ImGui::PushFont(fonts.mono());
    for (size_t r_i = 0; r_i < r.first_values.size(); ++r_i) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text_dim(std::to_string(r_i));
        for (float v : r.first_values[r_i]) {
            ImGui::TableNextColumn();
            char buf[32];
            std::snprintf(buf, sizeof buf, "%+.5g", static_cast<double>(v));
            ui::text(buf);
        }
    }
    ImGui::PopFont();
    ImGui::EndTable();
}

}  // namespace mlens
