#include "widgets/histogram_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "plot_axes.h"
#include "theme.h"

namespace mlens {

namespace {

constexpr float kDragThreshold = 4.0f;
constexpr int kMaxValueTicks = 8;
constexpr float kEndBinWidth = 12, kEndBinGap = 8;

ImU32 with_alpha(ImU32 color, int alpha) { return (color & ~IM_COL32_A_MASK) | (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT); }

ImU32 color_of(const std::vector<HistogramSeries>& series, size_t i) { return series[i].color ? series[i].color : series_color(i); }

// The union of the series' ranges, widened when it is a single point.
ValueRange data_range(const std::vector<HistogramSeries>& series) {
    ValueRange r{0, 0};
    bool first = true;
    for (const HistogramSeries& s : series) {
        if (s.counts.empty() || !std::isfinite(s.lo) || !std::isfinite(s.hi)) continue;
        r.lo = first ? s.lo : std::min(r.lo, s.lo);
        r.hi = first ? s.hi : std::max(r.hi, s.hi);
        first = false;
    }
    if (!(r.hi > r.lo)) {
        double pad = r.lo == 0 ? 0.5 : std::fabs(r.lo) * 0.5;
        r = {r.lo - pad, r.hi + pad};
    }
    return r;
}

std::string share_text(double share) {
    char buf[32];
    std::snprintf(buf, sizeof buf, share >= 0.001 || share == 0 ? "%.2f%%" : "%.4f%%", share * 100);
    return buf;
}

}  // namespace

std::optional<size_t> HistogramSeries::bin_of(double value) const {
    if (counts.empty() || !(value >= lo) || !(value <= hi) || !(hi > lo)) return std::nullopt;
    auto bin = static_cast<size_t>((value - lo) / bin_width());
    return std::min(bin, counts.size() - 1);
}

uint64_t HistogramSeries::share_total() const {
    if (total) return total;
    uint64_t sum = 0;
    for (uint64_t c : counts) sum += c;
    return sum;
}

ImU32 series_color(size_t position) {
    static const ImU32 kColors[] = {IM_COL32(86, 156, 214, 255), IM_COL32(236, 144, 52, 255), IM_COL32(96, 190, 110, 255),
                                    IM_COL32(190, 110, 200, 255)};
    return kColors[position % std::size(kColors)];
}

ImU32 outside_color() { return IM_COL32(214, 120, 36, 255); }

float HistogramPlot::x_of(double value) const {
    double span = m_shown.hi - m_shown.lo;
    double t = span > 0 ? (value - m_shown.lo) / span : 0;
    return m_plot_min.x + static_cast<float>(t) * (m_plot_max.x - m_plot_min.x);
}

double HistogramPlot::value_at(float x) const {
    float w = m_plot_max.x - m_plot_min.x;
    double t = w > 0 ? (x - m_plot_min.x) / w : 0;
    return m_shown.lo + t * (m_shown.hi - m_shown.lo);
}

float HistogramPlot::y_of(double count, double max_count) const {
    CountScale scale{log_scale, max_count};
    return m_plot_max.y - static_cast<float>(scale.fraction(count)) * (m_plot_max.y - m_plot_min.y);
}

HistogramPlot::Event HistogramPlot::draw(const char* id, const std::vector<HistogramSeries>& series, ImVec2 size) {
    Event event = Event::none;
    ImVec2 avail = ImGui::GetContentRegionAvail();
    if (size.x <= 0) size.x = std::max(avail.x, 120.0f);
    if (size.y <= 0) size.y = std::max(avail.y, 80.0f);
    ImGui::InvisibleButton(id, size);
    ImVec2 origin = ImGui::GetItemRectMin();
    m_frame_min = origin;
    m_frame_max = ImGui::GetItemRectMax();
    bool hovered = ImGui::IsItemHovered();

    m_shown = m_view.value_or(data_range(series));
    double max_count = 1;
    for (const HistogramSeries& s : series) {
        double w = s.bin_width();
        for (size_t b = 0; b < s.counts.size(); ++b) {
            double lo = s.lo + w * static_cast<double>(b);
            if (lo + w < m_shown.lo || lo > m_shown.hi) continue;
            max_count = std::max(max_count, static_cast<double>(s.counts[b]));
        }
    }

    const bool outside = !series.empty() && (series.front().below > 0 || series.front().above > 0);
    if (outside) max_count = std::max({max_count, static_cast<double>(series.front().below), static_cast<double>(series.front().above)});
    m_end_bin_room = outside ? kEndBinWidth + kEndBinGap : 0;

    // Margins: room for the widest count label on the left, the count title above, the end bins
    // on both sides, and a line of value labels and the value title below.
    float line = ImGui::GetTextLineHeight();
    float left = ImGui::CalcTextSize(count_label(max_count).c_str()).x + 10;
    left = std::max(left, ImGui::CalcTextSize("00.0k").x + 10);
    m_plot_min = ImVec2(origin.x + left + m_end_bin_room, origin.y + line + 6);
    m_plot_max = ImVec2(origin.x + size.x - 12 - m_end_bin_room, origin.y + size.y - 2 * line - 10);
    if (m_plot_max.x < m_plot_min.x + 10) m_plot_max.x = m_plot_min.x + 10;
    if (m_plot_max.y < m_plot_min.y + 10) m_plot_max.y = m_plot_min.y + 10;

    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(m_plot_min, m_plot_max, ImGui::GetColorU32(ImGuiCol_FrameBg));
    draw_axes(dl, max_count);
    dl->PushClipRect(m_plot_min, m_plot_max, true);
    draw_series(dl, series, max_count);
    dl->PopClipRect();
    dl->AddRect(m_plot_min, m_plot_max, ImGui::GetColorU32(ImGuiCol_Border));
    if (outside) draw_end_bins(dl, series.front(), max_count);
    draw_legend(dl, series);

    ImVec2 mouse = ImGui::GetIO().MousePos;
    bool in_plot = mouse.x >= m_plot_min.x && mouse.x <= m_plot_max.x && mouse.y >= m_plot_min.y && mouse.y <= m_plot_max.y;
    if (ImGui::IsItemActivated() && in_plot) m_drag_from = mouse.x;
    if (m_drag_from && ImGui::IsItemActive()) {
        float x = std::clamp(mouse.x, m_plot_min.x, m_plot_max.x);
        if (std::fabs(x - *m_drag_from) >= kDragThreshold)
            dl->AddRectFilled(ImVec2(std::min(x, *m_drag_from), m_plot_min.y), ImVec2(std::max(x, *m_drag_from), m_plot_max.y),
                              IM_COL32(255, 255, 255, 40));
    }
    if (m_drag_from && ImGui::IsItemDeactivated()) {
        float x = std::clamp(mouse.x, m_plot_min.x, m_plot_max.x);
        if (std::fabs(x - *m_drag_from) >= kDragThreshold) {
            double a = value_at(*m_drag_from), b = value_at(x);
            m_view = ValueRange{std::min(a, b), std::max(a, b)};
            event = Event::zoomed;
        }
        m_drag_from.reset();
    }
    if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        m_view.reset();
        event = Event::reset;
    }
    if (ImGui::BeginPopupContextItem(id)) {
        if (ImGui::MenuItem("Reset zoom", nullptr, false, m_view.has_value())) {
            m_view.reset();
            event = Event::reset;
        }
        ImGui::MenuItem("Log scale", nullptr, &log_scale);
        ImGui::EndPopup();
    }

    m_hover.clear();
    if (hovered && in_plot && !ImGui::IsItemActive()) update_hover(series);
    if (!m_hover.empty()) {
        ImGui::BeginTooltip();
        for (const HistogramHover& h : m_hover) {
            const HistogramSeries& s = series[h.series];
            double step = s.bin_width();
            std::string text = "[" + tick_label(h.lo, step / 100) + ", " + tick_label(h.hi, step / 100) + ")  " + std::to_string(h.count) +
                "  (" + share_text(h.share) + ")";
            if (!s.label.empty()) {
                ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(color_of(series, h.series)), "%s", s.label.c_str());
                ImGui::SameLine();
            }
            ImGui::TextUnformatted(text.c_str());
        }
        ImGui::EndTooltip();
        float x = mouse.x;
        dl->AddLine(ImVec2(x, m_plot_min.y), ImVec2(x, m_plot_max.y), IM_COL32(255, 255, 255, 60));
    }
    return event;
}

void HistogramPlot::update_hover(const std::vector<HistogramSeries>& series) {
    double v = value_at(ImGui::GetIO().MousePos.x);
    for (size_t i = 0; i < series.size(); ++i) {
        const HistogramSeries& s = series[i];
        std::optional<size_t> bin = s.bin_of(v);
        if (!bin) continue;
        double w = s.bin_width();
        uint64_t total = s.share_total();
        uint64_t count = s.counts[*bin];
        m_hover.push_back({i, *bin, s.lo + w * static_cast<double>(*bin), s.lo + w * static_cast<double>(*bin + 1), count,
                           total ? static_cast<double>(count) / static_cast<double>(total) : 0.0});
    }
}

void HistogramPlot::draw_axes(ImDrawList* dl, double max_count) const {
    ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border, 0.5f);
    ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    ImU32 dim = ImGui::ColorConvertFloat4ToU32(palette().dim);
    float line = ImGui::GetTextLineHeight();

    // At least three: with two, a narrow range often has only one nice tick inside it.
    int value_ticks = std::clamp(static_cast<int>((m_plot_max.x - m_plot_min.x) / 90), 3, kMaxValueTicks);
    double step = nice_step(m_shown.hi - m_shown.lo, value_ticks);
    for (double v : nice_ticks(m_shown.lo, m_shown.hi, value_ticks)) {
        float x = x_of(v);
        dl->AddLine(ImVec2(x, m_plot_min.y), ImVec2(x, m_plot_max.y), grid);
        dl->AddLine(ImVec2(x, m_plot_max.y), ImVec2(x, m_plot_max.y + 4), text);
        std::string label = tick_label(v, step);
        float w = ImGui::CalcTextSize(label.c_str()).x;
        float lx = std::clamp(x - w / 2, m_plot_min.x - 20, m_plot_max.x + 10 - w);
        dl->AddText(ImVec2(lx, m_plot_max.y + 5), text, label.c_str());
    }

    const ImU32 title = ImGui::ColorConvertFloat4ToU32(palette().dim);
    const float x_title_w = ImGui::CalcTextSize(x_title.c_str()).x;
    dl->AddText(ImVec2((m_plot_min.x + m_plot_max.x - x_title_w) / 2, m_plot_max.y + line + 7), title, x_title.c_str());
    dl->AddText(ImVec2(m_frame_min.x, m_frame_min.y), title, log_scale ? "count (log)" : "count");

    std::vector<double> counts;
    if (log_scale) {
        for (uint64_t c : log_ticks(static_cast<uint64_t>(max_count))) counts.push_back(static_cast<double>(c));
    } else {
        int count_ticks = std::clamp(static_cast<int>((m_plot_max.y - m_plot_min.y) / (line * 2.5f)), 1, 6);
        double count_step = std::max(1.0, nice_step(max_count, count_ticks));
        for (double c = 0; c <= max_count + 1e-9; c += count_step) counts.push_back(c);
    }
    float min_gap = line * 1.1f, last_y = 1e30f;
    for (double c : counts) {
        float y = y_of(c, max_count);
        if (last_y - y < min_gap && c != 0) continue;
        last_y = y;
        dl->AddLine(ImVec2(m_plot_min.x, y), ImVec2(m_plot_max.x, y), grid);
        std::string label = count_label(c);
        float w = ImGui::CalcTextSize(label.c_str()).x;
        // Left of the end bin, when there is one, so its count never covers a tick label.
        dl->AddText(ImVec2(m_plot_min.x - m_end_bin_room - w - 5, y - line / 2), dim, label.c_str());
    }
}

void HistogramPlot::draw_series(ImDrawList* dl, const std::vector<HistogramSeries>& series, double max_count) const {
    for (size_t i = 0; i < series.size(); ++i) {
        const HistogramSeries& s = series[i];
        ImU32 color = color_of(series, i);
        double w = s.bin_width();
        if (s.counts.empty() || !(w > 0)) continue;
        float base = m_plot_max.y;
        std::vector<ImVec2> outline;
        for (size_t b = 0; b < s.counts.size(); ++b) {
            double lo = s.lo + w * static_cast<double>(b);
            if (lo + w < m_shown.lo || lo > m_shown.hi) continue;
            float x0 = x_of(lo), x1 = x_of(lo + w);
            float y = y_of(static_cast<double>(s.counts[b]), max_count);
            if (i == 0) {
                // Keep a hairline gap between wide bars so single bins stay distinguishable.
                float gap = x1 - x0 > 6 ? 1.0f : 0.0f;
                if (s.counts[b] > 0) dl->AddRectFilled(ImVec2(x0, y), ImVec2(std::max(x0 + 1, x1 - gap), base), with_alpha(color, 210));
            } else {
                if (outline.empty()) outline.push_back(ImVec2(x0, base));
                outline.push_back(ImVec2(x0, y));
                outline.push_back(ImVec2(x1, y));
                if (s.counts[b] > 0) dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, base), with_alpha(color, 45));
            }
        }
        if (!outline.empty()) {
            outline.push_back(ImVec2(outline.back().x, base));
            dl->AddPolyline(outline.data(), static_cast<int>(outline.size()), color, ImDrawFlags_None, 1.8f);
        }
    }
}

void HistogramPlot::draw_legend(ImDrawList* dl, const std::vector<HistogramSeries>& series) const {
    constexpr const char* kOutsideLabel = "outside the range";
    const bool outside = m_end_bin_room > 0;
    size_t labelled = 0;
    float width = outside ? ImGui::CalcTextSize(kOutsideLabel).x : 0;
    for (const HistogramSeries& s : series) {
        if (s.label.empty()) continue;
        ++labelled;
        width = std::max(width, ImGui::CalcTextSize(s.label.c_str()).x);
    }
    // One series needs no legend unless the end bins' colour has to be told apart from it.
    if (labelled < 2 && !outside) return;
    if (labelled < 2) labelled = 0;
    const size_t rows = labelled + (outside ? 1 : 0);
    float line = ImGui::GetTextLineHeightWithSpacing();
    ImVec2 box_max(m_plot_max.x - 6, m_plot_min.y + 6 + line * static_cast<float>(rows) + 6);
    ImVec2 box_min(box_max.x - width - 36, m_plot_min.y + 6);
    dl->AddRectFilled(box_min, box_max, ImGui::GetColorU32(ImGuiCol_PopupBg, 0.85f), 3.0f);
    dl->AddRect(box_min, box_max, ImGui::GetColorU32(ImGuiCol_Border), 3.0f);
    float y = box_min.y + 6;
    for (size_t i = 0; i < series.size() && labelled > 0; ++i) {
        if (series[i].label.empty()) continue;
        float mid = y + line / 2 - 1;
        dl->AddRectFilled(ImVec2(box_min.x + 8, mid - 5), ImVec2(box_min.x + 22, mid + 5), color_of(series, i));
        dl->AddText(ImVec2(box_min.x + 28, y), ImGui::GetColorU32(ImGuiCol_Text), series[i].label.c_str());
        y += line;
    }
    if (outside) {
        float mid = y + line / 2 - 1;
        dl->AddRectFilled(ImVec2(box_min.x + 8, mid - 5), ImVec2(box_min.x + 22, mid + 5), outside_color());
        dl->AddText(ImVec2(box_min.x + 28, y), ImGui::GetColorU32(ImGuiCol_Text), kOutsideLabel);
    }
}

void HistogramPlot::draw_end_bins(ImDrawList* dl, const HistogramSeries& first, double max_count) {
    const float line = ImGui::GetTextLineHeight();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    struct End {
        float left;
        uint64_t count;
        const char* side;
    };
    for (End e : {End{m_plot_min.x - m_end_bin_room, first.below, "below"}, End{m_plot_max.x + kEndBinGap, first.above, "above"}}) {
        const float right = e.left + kEndBinWidth;
        float top = y_of(static_cast<double>(e.count), max_count);
        if (e.count > 0) top = std::min(top, m_plot_max.y - 2);
        // Stripes tell the end bins from the bins of the range, whatever the colours.
        for (float y = top; y < m_plot_max.y; y += 4)
            dl->AddRectFilled(ImVec2(e.left, y), ImVec2(right, std::min(y + 3, m_plot_max.y)), outside_color());
        const std::string count = count_label(static_cast<double>(e.count));
        const float w = ImGui::CalcTextSize(count.c_str()).x;
        dl->AddText(ImVec2((e.left + right - w) / 2, std::max(m_plot_min.y - line, top - line - 1)), outside_color(), count.c_str());
        if (ImGui::IsItemHovered() && mouse.x >= e.left && mouse.x <= right && mouse.y >= m_plot_min.y && mouse.y <= m_plot_max.y)
            ImGui::SetTooltip("%s values %s the range [%s, %s]", std::to_string(e.count).c_str(), e.side,
                              tick_label(first.lo, first.bin_width() / 100).c_str(), tick_label(first.hi, first.bin_width() / 100).c_str());
    }
}

}  // namespace mlens
