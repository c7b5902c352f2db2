#include "panels/weights_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "mlens/analysis/tensor_report.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

// A label cell and its value cell.
void cells(const char* label, const std::string& value, const ImVec4* color = nullptr) {
    ImGui::TableNextColumn();
    ui::text_dim(label);
    ImGui::TableNextColumn();
    if (color)
        ui::text_colored(*color, value);
    else
        ui::text(value);
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

// Two label-value pairs a row, so that a table takes half the height; labels are as wide as
// `widest_label`.
bool begin_pair_table(const char* id, const char* widest_label) {
    if (!ImGui::BeginTable(id, 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) return false;
    const float label_width = ImGui::CalcTextSize(widest_label).x + 8;
    for (int pair = 0; pair < 2; ++pair) {
        ImGui::TableSetupColumn("label", ImGuiTableColumnFlags_WidthFixed, label_width);
        ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    }
    return true;
}

std::string percentile_label(size_t i) {
    char label[24];
    std::snprintf(label, sizeof label, "p%g", TensorStats::kPercentiles[i]);
    return label;
}

}  // namespace

std::string number_text(double v) {
    if (std::isnan(v)) return "-";
    if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

namespace {

struct Cell {
    const char* label;
    std::string value;
    const ImVec4* color = nullptr;
};

// One row of a pair table: two label-value pairs.
void pair_row(const Cell& left, const Cell& right) {
    ImGui::TableNextRow();
    cells(left.label, left.value, left.color);
    cells(right.label, right.value, right.color);
}

// A figure of the finite values; "none" when there is none.
std::string figure_text(const TensorStats& s, double v) { return s.finite ? number_text(v) : "none"; }

// count and zeros, NaN and +Inf, -Inf (always, or only when there are any), min and max (an
// integer tensor's exactly), mean and std.
void common_stats_rows(const TensorStats& s, bool always_non_finite) {
    pair_row({"count", ui::with_separators(s.count)}, {"zeros", count_and_share(s.zeros, s.count)});
    if (always_non_finite || s.nan || s.inf)
        pair_row({"NaN", count_and_share(s.nan, s.count), s.nan ? &palette().error : nullptr},
                 {"\xC2\xB1Inf", "+" + count_and_share(s.pos_inf, s.count) + "  -" + count_and_share(s.neg_inf, s.count),
                  s.inf ? &palette().error : nullptr});
    if (s.integer_extremes)
        pair_row({"min", wide_integer_text(s.integer_extremes->min)}, {"max", wide_integer_text(s.integer_extremes->max)});
    else
        pair_row({"min", figure_text(s, s.min)}, {"max", figure_text(s, s.max)});
    pair_row({"mean", figure_text(s, s.mean)}, {"std", figure_text(s, s.std)});
}

}  // namespace

void weights_stats_table(const TensorStats& s, std::optional<StatsRoute> route) {
    if (!begin_pair_table("stats", "kurtosis")) return;
    common_stats_rows(s, true);
    pair_row({"mean |x|", figure_text(s, s.mean_abs)}, {"kurtosis", figure_text(s, s.kurtosis)});
    // Percentiles in symmetric pairs (p0.1 with p99.9, ...), the median alone.
    const size_t n = TensorStats::kPercentiles.size();
    for (size_t i = 0; i < n / 2; ++i)
        pair_row({percentile_label(i).c_str(), figure_text(s, s.percentiles[i])},
                 {percentile_label(n - 1 - i).c_str(), figure_text(s, s.percentiles[n - 1 - i])});
    // Beside the median, how far every percentile may be from the exact one (the middle of a bin).
    pair_row({percentile_label(n / 2).c_str(), figure_text(s, s.percentiles[n / 2])},
             {"exact to", s.finite ? "\xC2\xB1" + figure_text(s, s.percentile_within) : "none"});
    ImGui::EndTable();
    if (!route) return;
    ui::text_dim(std::string("route: ") + stats_route_name(*route));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", stats_route_summary(*route));
}

void weights_brief_stats_table(const char* id, const TensorStats& s) {
    // Short, so that the section stays small under the main statistics.
    if (!begin_pair_table(id, "\xC2\xB1Inf")) return;
    common_stats_rows(s, false);
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
    if (begin_pair_table("compare_metrics", "mean |a-b|")) {
        pair_row({"RMSE", number_text(c.rmse)}, {"NMSE", number_text(c.nmse)});
        pair_row({"max |a-b|", number_text(c.max_abs)}, {"mean |a-b|", number_text(c.mean_abs)});
        pair_row({"cosine", number_text(c.cosine)}, {"SNR dB", number_text(c.snr_db)});
        if (c.nonfinite) {
            ImGui::TableNextRow();
            cells("non-finite", ui::with_separators(c.nonfinite), &palette().warning);
        }
        ImGui::EndTable();
    }
    if ((c.worst_rows.empty() && c.worst_blocks.empty()) || !begin_table("compare_rows")) return;
    for (const RowError& w : c.worst_rows) {
        std::string label = "row " + std::to_string(w.row);
        char text[64];
        std::snprintf(text, sizeof text, "rmse %.3g  max %.3g", w.rmse, w.max_abs);
        row(label.c_str(), text);
    }
    // The worst quantization blocks, where they are; the worst three keep the column short.
    constexpr size_t kShownBlocks = 3;
    for (size_t i = 0; i < std::min(kShownBlocks, c.worst_blocks.size()); ++i) {
        const BlockError& w = c.worst_blocks[i];
        std::string label = "block " + std::to_string(w.block);
        char text[96];
        std::snprintf(text, sizeof text, "row %llu col %llu  rmse %.3g", static_cast<unsigned long long>(w.row),
                      static_cast<unsigned long long>(w.column), w.rmse);
        row(label.c_str(), text);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%llu values from row %llu, column %llu: rmse %.4g, max |a-b| %.4g",
                              static_cast<unsigned long long>(c.block_length), static_cast<unsigned long long>(w.row),
                              static_cast<unsigned long long>(w.column), w.rmse, w.max_abs);
    }
    ImGui::EndTable();
}

void weights_values_table(const WeightsResult& r, uint64_t rows_total, const FontSet& fonts) {
    if (r.first_values.empty()) return;
    size_t cols = 0;
    for (const auto& v : r.first_values) cols = std::max(cols, v.size());
    ui::text_dim("first " + std::to_string(r.first_values.size()) + " of " + ui::with_separators(rows_total) + " rows \xC2\xB7 first " +
                 std::to_string(cols) + " of " + ui::with_separators(r.row_length) + " values per row (ne[0])");
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
        ImGuiTableFlags_SizingFixedFit;
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
