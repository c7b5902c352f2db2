#include "panels/weights_location_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include <imgui.h>

#include "mlens/quant/tensor_view.h"
#include "mlens/text/escape.h"
#include "panels/weights_tables.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

// Min, max and RMS over the finite values of `values`, and how many are not finite.
BlockSummary summarize(const float* values, uint64_t count) {
    BlockSummary s;
    double squares = 0;
    uint64_t finite = 0;
    for (uint64_t i = 0; i < count; ++i) {
        float v = values[i];
        if (!std::isfinite(v)) {
            ++s.nonfinite;
            continue;
        }
        s.min = finite ? std::min(s.min, v) : v;
        s.max = finite ? std::max(s.max, v) : v;
        squares += static_cast<double>(v) * v;
        ++finite;
    }
    s.rms = finite ? std::sqrt(squares / static_cast<double>(finite)) : 0.0;
    return s;
}

std::string value_text(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.6g", static_cast<double>(v));
    return buf;
}

}  // namespace

Result<RowBlocks> read_row_blocks(const Model& model, size_t tensor, std::optional<uint64_t> expert, uint64_t row, JobContext* job) {
    Result<TensorView> view = TensorView::open(model, tensor);
    if (view && expert) view = view->slice(*expert);
    if (!view) return view.error();
    const uint64_t row_length = std::max<uint64_t>(1, view->row_length());
    RowBlocks out;
    out.row = row;
    out.rows = view->size() / row_length;
    if (row >= out.rows)
        return Error{ErrorCode::E_RANGE, view->info().name, std::nullopt,
                     "row " + std::to_string(row) + " is beyond the " + std::to_string(out.rows) + " rows of the tensor"};
    out.type_block_length = std::max<uint64_t>(1, view->block_length());
    out.block_length = out.type_block_length > 1 ? out.type_block_length : kElementBlock;
    out.values.resize(row_length);
    if (Status read = view->read(row * row_length, row_length, out.values.data()); !read) return read.error();
    if (job_cancelled(job)) return cancelled_error();
    BlockSummary whole = summarize(out.values.data(), row_length);
    out.rms = whole.rms;
    out.absmax = std::max(std::fabs(whole.min), std::fabs(whole.max));
    out.nonfinite = whole.nonfinite;
    for (uint64_t first = 0; first < row_length; first += out.block_length)
        out.blocks.push_back(summarize(out.values.data() + first, std::min(out.block_length, row_length - first)));
    return out;
}

void WeightsLocationView::follow(JobRunner& jobs, RowPlace place) {
    if (m_place == place) return;
    m_job.cancel();
    m_row.reset();
    m_error.clear();
    m_highlight.reset();
    m_place = place;
    std::string name = "row " + std::to_string(place.row) + " of " + escape_for_display(place.model->tensors[place.tensor].name, 60);
    m_job = jobs.start(std::move(name),
                       [place](JobContext& job) { return read_row_blocks(*place.model, place.tensor, place.expert, place.row, &job); });
}

void WeightsLocationView::poll() {
    std::optional<Result<RowBlocks>> taken = m_job.try_take();
    if (!taken) return;
    if (!*taken) {
        if (taken->error().code != ErrorCode::E_CANCELLED) m_error = escape_for_display(taken->error().to_string(), 400);
        return;
    }
    m_row = std::make_shared<RowBlocks>(std::move(*taken).value());
    if (m_place && m_place->block) m_highlight = *m_place->block * m_row->type_block_length / m_row->block_length;
    m_scroll = m_highlight.has_value();
}

void WeightsLocationView::draw(const FontSet& fonts) {
    poll();
    if (m_job) {
        ImGui::ProgressBar(static_cast<float>(m_job.progress()), ImVec2(240, 0), "decoding the row\xE2\x80\xA6");
        return;
    }
    if (!m_error.empty()) {
        ImGui::PushTextWrapPos(0);
        ui::text_colored(palette().error, m_error);
        ImGui::PopTextWrapPos();
        return;
    }
    if (!m_row) return;
    const RowBlocks& r = *m_row;
    std::string line = "row " + ui::with_separators(r.row) + " of " + ui::with_separators(r.rows) + " \xC2\xB7 " +
        ui::with_separators(r.values.size()) + " values \xC2\xB7 RMS " + number_text(r.rms) + " \xC2\xB7 max |x| " + number_text(r.absmax);
    if (r.nonfinite) line += " \xC2\xB7 " + ui::with_separators(r.nonfinite) + " NaN/Inf";
    ui::text(line);
    if (m_highlight && *m_highlight < r.blocks.size())
        ui::text_colored(palette().accent,
                         "block " + ui::with_separators(*m_highlight) + " of " + ui::with_separators(r.blocks.size()) + " (" +
                             std::to_string(r.block_length) + " values each)");
    float table_height = std::max(ImGui::GetTextLineHeightWithSpacing() * 6, ImGui::GetContentRegionAvail().y * 0.6f);
    ImGui::BeginChild("row_blocks", ImVec2(0, table_height), false);
    blocks_table();
    ImGui::EndChild();
    block_values(fonts);
}

void WeightsLocationView::blocks_table() {
    const RowBlocks& r = *m_row;
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
        ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("blocks", 6, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    // Widths from the widest text each column can hold, not fitted from the first frame's rows.
    const auto width = [](const std::string& a, const std::string& b) {
        return std::max(ImGui::CalcTextSize(a.c_str()).x, ImGui::CalcTextSize(b.c_str()).x);
    };
    const std::string widest_value = "-0.000000e-00";
    const std::pair<const char*, float> columns[] = {{"block", width("block", ui::with_separators(r.blocks.size()))},
                                                     {"first column", width("first column", ui::with_separators(r.values.size()))},
                                                     {"min", width("min", widest_value)},
                                                     {"max", width("max", widest_value)},
                                                     {"RMS", width("RMS", widest_value)},
                                                     {"NaN/Inf", width("NaN/Inf", ui::with_separators(r.block_length))}};
    for (const auto& [name, w] : columns) ImGui::TableSetupColumn(name, ImGuiTableColumnFlags_WidthFixed, w);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(r.blocks.size()));
    if (m_scroll && m_highlight && *m_highlight < r.blocks.size()) {
        const int shown = static_cast<int>(*m_highlight);
        clipper.ForceDisplayRangeByIndices(shown, shown + 1);
    }
    while (clipper.Step()) {
        for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
            const auto b = static_cast<uint64_t>(i);
            const BlockSummary& s = r.blocks[b];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(i);
            if (ImGui::Selectable(std::to_string(b).c_str(), m_highlight == b, ImGuiSelectableFlags_SpanAllColumns)) m_highlight = b;
            if (m_scroll && m_highlight == b) {
                ImGui::SetScrollHereY(0.5f);
                m_scroll = false;
            }
            ImGui::PopID();
            ImGui::TableNextColumn();
            ui::text_dim(ui::with_separators(b * r.block_length));
            ImGui::TableNextColumn();
            ui::text(value_text(s.min));
            ImGui::TableNextColumn();
            ui::text(value_text(s.max));
            ImGui::TableNextColumn();
            ui::text(number_text(s.rms));
            ImGui::TableNextColumn();
            if (s.nonfinite)
                ui::text_colored(palette().error, ui::with_separators(s.nonfinite));
            else
                ui::text_dim("0");
        }
    }
    ImGui::EndTable();
}

void WeightsLocationView::block_values(const FontSet& fonts) {
    const RowBlocks& r = *m_row;
    if (!m_highlight || *m_highlight >= r.blocks.size()) return;
    const uint64_t first = *m_highlight * r.block_length;
    const uint64_t last = std::min<uint64_t>(first + r.block_length, r.values.size());
    ui::text_dim("values of block " + ui::with_separators(*m_highlight) + " (columns " + ui::with_separators(first) + "\xE2\x80\x93" +
                 ui::with_separators(last - 1) + ")");
    // Eight values a line where they fit, else four, two or one: a narrow pane gets fewer columns
    // rather than values drawn over each other.
    ImGui::PushFont(fonts.mono());
    const float padding = 2 * ImGui::GetStyle().CellPadding.x;
    const float value_width = ImGui::CalcTextSize("-0.000000e-00").x + padding;
    const float index_width = ImGui::CalcTextSize(ui::with_separators(last).c_str()).x + padding;
    uint64_t per_line = 8;
    while (per_line > 1 && index_width + static_cast<float>(per_line) * value_width > ImGui::GetContentRegionAvail().x) per_line /= 2;
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("block_values", static_cast<int>(per_line) + 1, flags)) {
        ImGui::PopFont();
        return;
    }
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, index_width - padding);
    for (uint64_t c = 0; c < per_line; ++c) ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, value_width - padding);
    for (uint64_t line = first; line < last; line += per_line) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text_dim(ui::with_separators(line));
        for (uint64_t c = line; c < std::min(line + per_line, last); ++c) {
            ImGui::TableNextColumn();
            float v = r.values[c];
            if (std::isfinite(v))
                ui::text(value_text(v));
            else
                ui::text_colored(palette().error, value_text(v));
        }
    }
    ImGui::EndTable();
    ImGui::PopFont();
}

}  // namespace mlens
