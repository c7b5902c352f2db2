#include "panels/inference_corpus_view.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "mlens/text/number_format.h"
#include "state/display_text.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/plot_frame.h"
#include "widgets/token_chips.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr uint32_t kHistogramBins = 64;
// Tokens shown before a selected position (its chunk permitting).
constexpr size_t kWindowTokens = 24;

// "v ± err" in llama-perplexity's printf format.
std::string printf_pair(const char* format, double v, double err) {
    char buf[96];
    std::snprintf(buf, sizeof buf, format, v, err);
    return buf;
}

// Where scored position `index` sits: the chunk's first token in result.tokens and the position
// inside the chunk whose next-token distribution was scored.
struct ScoredAt {
    size_t chunk_start = 0;
    size_t position = 0;
};

ScoredAt scored_at(const CorpusKldResult& r, size_t index) {
    const size_t per_chunk = kld_scored_per_chunk(r.n_ctx);
    return ScoredAt{index / per_chunk * r.n_ctx, kld_first_scored(r.n_ctx) + index % per_chunk};
}

}  // namespace

InferenceCorpusView::InferenceCorpusView() {
    options.n_ctx = 128;
    options.max_chunks = -1;
}

bool InferenceCorpusView::run(PanelContext& ctx, InferenceController& c, InferenceAbView& ab) {
    Document* b = ab.chosen_b(ctx);
    if (!b || text_path.empty()) return false;
    return c.start<KldOp>(ctx.jobs, {b->path, "", text_path, options, {}});
}

std::optional<std::string> InferenceCorpusView::take_ab_prompt() {
    std::optional<std::string> out = std::move(m_ab_prompt);
    m_ab_prompt.reset();
    return out;
}

void InferenceCorpusView::compare_in_ab() {
    if (m_window.empty()) return;
    std::string text;
    for (size_t t = 0; t + 1 < m_window.size(); ++t)
        if (!m_window[t].control) text += m_window[t].piece;
    m_ab_prompt = std::move(text);
}

void InferenceCorpusView::rebuild(const KldOp::Outcome& k) {
    m_selected.reset();
    m_window.clear();
    m_window_error.reset();
    m_series.clear();
    m_plot.set_view(std::nullopt);
    m_plot.log_scale = true;  // a few positions carry most of the divergence
    m_plot.x_title = "KLD(A \xE2\x80\x96 B) at a position, nats";
    HistogramSeries s;
    s.label = "scored positions";
    s.lo = 0;
    s.hi = k.kld_order.max > 0 ? k.kld_order.max : 1.0;
    s.counts.assign(kHistogramBins, 0);
    for (float v : k.result.kld)
        if (auto bin = s.bin_of(v))
            ++s.counts[*bin];
        else if (v < s.lo)
            ++s.below;
        else
            ++s.above;
    m_series.push_back(std::move(s));
}

void InferenceCorpusView::select(InferenceController& c, size_t index) {
    const auto& k = outcome_of(c.latest<KldOp>());
    if (!k || index >= k->result.kld.size()) return;
    const CorpusKldResult& r = k->result;
    m_selected = index;
    m_window.clear();
    m_window_error.reset();
    ScoredAt at = scored_at(r, index);
    const size_t first = at.position >= kWindowTokens ? at.position - kWindowTokens + 1 : 0;
    std::vector<int32_t> ids(r.tokens.begin() + static_cast<ptrdiff_t>(at.chunk_start + first),
                             r.tokens.begin() + static_cast<ptrdiff_t>(at.chunk_start + at.position + 2));
    ids.push_back(r.top_a[index]);
    ids.push_back(r.top_b[index]);
    auto pieces = c.pieces(ids);
    if (!pieces) {
        m_window_error = pieces.error();
        return;
    }
    m_top_b = pieces->back().piece;
    pieces->pop_back();
    m_top_a = pieces->back().piece;
    pieces->pop_back();
    m_window = std::move(pieces).value();
}

void InferenceCorpusView::summary(const KldOp::Outcome& k) {
    const KldMoments& m = k.moments;
    const KldOrder& o = k.kld_order;
    // Two tables, one above the other, rather than one wide one, so a small window shows every figure.
    ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("kld_summary", 5, flags)) {
        for (const char* h : {"positions", "PPL(A)", "PPL(B)", "ln(PPL(B)/PPL(A))", "mean KLD"}) ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ui::text(ui::with_separators(m.count));
        ImGui::TableNextColumn();
        ui::text(plus_minus_text(m.ppl_a, m.ppl_a_err));
        ImGui::TableNextColumn();
        ui::text(plus_minus_text(m.ppl_b, m.ppl_b_err));
        ImGui::TableNextColumn();
        ui::text(printf_pair("%.6f \xC2\xB1 %.6f", m.ln_ratio, m.ln_ratio_err));
        ImGui::TableNextColumn();
        ui::text(printf_pair("%.6f \xC2\xB1 %.6f", m.kld_mean, m.kld_err));
        ImGui::EndTable();
    }
    if (ImGui::BeginTable("kld_order", 6, flags)) {
        for (const char* h : {"median KLD", "p90", "p99", "p99.9", "max KLD", "same top token"}) ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        ImGui::TableNextRow();
        for (double v : {o.median, o.p90, o.p99, o.p999, o.max}) {
            ImGui::TableNextColumn();
            ui::text(ui::number_format("%.6f", v));
        }
        ImGui::TableNextColumn();
        ui::text(ui::number_format("%.2f%%", m.same_top * 100.0) + " \xC2\xB1 " + ui::number_format("%.2f%%", m.same_top_err * 100.0) +
                 " (" + ui::with_separators(m.same_top_count) + ")");
        ImGui::EndTable();
    }
    ImGui::PushTextWrapPos(0.0f);
    // Δp in percent, as `mlens kld` prints it.
    ui::text_dim("\xCE\x94p = p_B(next) - p_A(next): mean " + plus_minus_text(100 * m.p_diff_mean, 100 * m.p_diff_err) + " %, RMS " +
                 plus_minus_text(100 * m.p_diff_rms, 100 * m.p_diff_rms_err) + " %, median " + percent_text(k.p_diff_order.median) +
                 ", p1 " + percent_text(k.p_diff_order.p1) + ", p99 " + percent_text(k.p_diff_order.p99) + "  \xC2\xB7  " +
                 plural(k.result.n_chunk, "chunk") + " of " + plural(k.result.n_ctx, "token") + " (" +
                 ui::with_separators(k.result.text_tokens) + " in the text), " + ui::number_format("%.1f s", k.result.seconds));
    ImGui::PopTextWrapPos();
}

void InferenceCorpusView::position_plot(InferenceController& c, const KldOp::Outcome& k, float height) {
    const CorpusKldResult& r = k.result;
    const size_t n = r.kld.size();
    const double top = k.kld_order.max > 0 ? k.kld_order.max * 1.05 : 1.0;
    PlotRange range{0.0, static_cast<double>(std::max<size_t>(n, 1)), 0.0, top};
    PlotFrame f = draw_plot_frame("##kld_positions", ImVec2(0, height), range, "scored position (over every chunk; chunk starts marked)",
                                  "KLD(A \xE2\x80\x96 B), nats", true);
    const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool hovered = ImGui::IsItemHovered() && f.contains(mouse);
    dl->PushClipRect(f.min, f.max, true);
    // One bar per pixel column holding the largest KLD of its positions, so a long text stays readable.
    const ImU32 bar = plot_series_color(0);
    const int columns = std::max(1, static_cast<int>(f.max.x - f.min.x));
    size_t from = 0;
    for (int col = 0; col < columns && from < n; ++col) {
        auto to = static_cast<size_t>(static_cast<double>(n) * (col + 1) / columns);
        to = std::clamp(to, from + 1, n);
        float peak = 0;
        for (size_t i = from; i < to; ++i) peak = std::max(peak, r.kld[i]);
        const float x0 = f.x_of(static_cast<double>(from)), x1 = std::max(f.x_of(static_cast<double>(to)), x0 + 1.0f);
        dl->AddRectFilled(ImVec2(x0, f.y_of(peak)), ImVec2(x1, f.max.y), bar);
        from = to;
    }
    // Chunk starts over the bars (each chunk restarts from an empty cache), when there are few enough to see.
    const size_t per_chunk = kld_scored_per_chunk(r.n_ctx);
    if (r.n_chunk <= 64)
        for (int32_t chunk = 1; chunk < r.n_chunk; ++chunk) {
            const float x = f.x_of(static_cast<double>(static_cast<size_t>(chunk) * per_chunk));
            dl->AddLine(ImVec2(x, f.min.y), ImVec2(x, f.max.y), ImGui::GetColorU32(ImGuiCol_Text, 0.2f));
        }
    const ImU32 red = ImGui::ColorConvertFloat4ToU32(palette().error);
    const ImU32 mean_color = ImGui::ColorConvertFloat4ToU32(palette().warning);
    const float mean_y = f.y_of(k.moments.kld_mean);
    dl->AddLine(ImVec2(f.min.x, mean_y), ImVec2(f.max.x, mean_y), mean_color, 1.5f);
    const std::string mean_label = "mean KLD " + significant(k.moments.kld_mean, 3);
    dl->AddText(ImVec2(f.max.x - ImGui::CalcTextSize(mean_label.c_str()).x - 6, f.min.y + 2), mean_color, mean_label.c_str());
    if (m_selected) {
        float x = f.x_of(static_cast<double>(*m_selected) + 0.5);
        dl->AddLine(ImVec2(x, f.min.y), ImVec2(x, f.max.y), red, 2.0f);
    }
    dl->PopClipRect();
    if (!hovered || n == 0) return;
    const double at = f.x_at(mouse.x);
    if (at < 0 || at >= static_cast<double>(n)) return;
    const auto i = static_cast<size_t>(at);
    ScoredAt where = scored_at(r, i);
    ImGui::BeginTooltip();
    ui::text("position " + std::to_string(i) + ": chunk " + std::to_string(where.chunk_start / r.n_ctx) + ", token " +
             std::to_string(where.position) + "\nKLD " + significant(r.kld[i], 4) + "\n\xCE\x94p " + percent_text(r.p_diff[i]) +
             (r.top_a[i] == r.top_b[i] ? "\nsame top token" : "\ntop tokens differ") + "\nclick: the tokens there");
    ImGui::EndTooltip();
    if (clicked) select(c, i);
}

void InferenceCorpusView::position_detail(PanelContext& ctx, const KldOp::Outcome& k) {
    if (!m_selected) {
        ui::text_dim("Click a position in the plot to see its tokens.");
        return;
    }
    if (m_window_error) {
        ui::text_colored(palette().error, escape_for_display(m_window_error->to_string(), 400));
        return;
    }
    const CorpusKldResult& r = k.result;
    const size_t i = *m_selected;
    ScoredAt where = scored_at(r, i);
    ui::text("position " + std::to_string(i) + " (chunk " + std::to_string(where.chunk_start / r.n_ctx) + ", token " +
             std::to_string(where.position) + "): KLD " + significant(r.kld[i], 4) + ", \xCE\x94p " + percent_text(r.p_diff[i]) +
             ", top A " + visible_piece_text(m_top_a, 40) + ", top B " + visible_piece_text(m_top_b, 40));
    ImGui::SameLine(0, 16);
    if (ImGui::SmallButton("Compare in A/B")) compare_in_ab();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Run the A/B view on the text of these tokens (a shorter context than the chunk's)");
    const Palette& pal = palette();
    std::vector<TokenChip> chips;
    const size_t first = where.position + 2 - m_window.size();
    for (size_t t = 0; t < m_window.size(); ++t) {
        const bool next = t + 1 == m_window.size();
        TokenChip chip{m_window[t].piece, std::to_string(first + t), next ? "the token that follows (scored)" : "", 0u, 0u};
        if (next) chip.border = ImGui::ColorConvertFloat4ToU32(pal.accent);
        if (t + 2 == m_window.size()) chip.border = ImGui::ColorConvertFloat4ToU32(pal.error);
        chips.push_back(std::move(chip));
    }
    token_chip_box("kld_window", chips, ctx.fonts.mono(), 90);
}

void InferenceCorpusView::draw(PanelContext& ctx, InferenceController& c, InferenceAbView& ab) {
    if (!c.can_decode()) {
        ui::text_dim(c.loaded() ? "The model is loaded as vocabulary only: reload it with weights to score a text."
                                : "Load the model (A) to score a text against the B chosen in the A/B tab.");
        return;
    }
    Document* b = ab.chosen_b(ctx);
    ui::text("B: " + (b ? escape_for_display(b->title, 200) : std::string("none")) + " (chosen in the A/B tab)");
    const char* choose = "Choose\xE2\x80\xA6";
    const float choose_w = ImGui::CalcTextSize(choose).x + 2 * ImGui::GetStyle().FramePadding.x + ImGui::GetStyle().ItemSpacing.x;
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("text file (UTF-8)").x - ImGui::GetStyle().ItemInnerSpacing.x - choose_w);
    ImGui::InputText("text file (UTF-8)", &text_path);
    ImGui::SameLine();
    if (ImGui::Button(choose)) m_chooser.open(std::filesystem::path(text_path.empty() ? ctx.doc.path : text_path).parent_path().string());
    if (auto chosen = m_chooser.draw()) text_path = *chosen;
    ImGui::SetNextItemWidth(110);
    int n_ctx = static_cast<int>(options.n_ctx);
    if (ImGui::InputInt("ctx", &n_ctx, 64, 256)) options.n_ctx = static_cast<uint32_t>(std::clamp(n_ctx, 16, 1 << 16));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Tokens per chunk; the second half of each chunk is scored");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(110);
    ImGui::InputInt("chunks (-1: all)", &options.max_chunks, 1, 10);
    options.max_chunks = std::max(options.max_chunks, -1);
    ImGui::SameLine(0, 16);
    ImGui::BeginDisabled(c.busy() || !b || text_path.empty());
    if (ImGui::Button("Score")) run(ctx, c, ab);
    ImGui::EndDisabled();
    ImGui::PushTextWrapPos(0.0f);
    ui::text_dim(
        "As llama-perplexity --kl-divergence: both models decode each chunk from an empty cache; each "
        "position of a chunk's second half compares B's next-token distribution with A's.");
    if (const auto& e = error_of(c.latest<KldOp>())) ui::job_error_text(*e);
    ImGui::PopTextWrapPos();
    const auto& k = outcome_of(c.latest<KldOp>());
    if (!k) return;
    if (m_serial != c.published<KldOp>()) {
        // A new result starts at its most divergent position.
        m_serial = c.published<KldOp>();
        rebuild(*k);
        if (!k->result.kld.empty())
            select(c, static_cast<size_t>(std::max_element(k->result.kld.begin(), k->result.kld.end()) - k->result.kld.begin()));
    }
    ui::text_dim("B: " + escape_for_display(k->b_model, 300) + "  \xC2\xB7  text: " + escape_for_display(k->text_path, 300));
    if (!k->b_route.banner.empty()) ui::text_colored(palette().warning, "B " + escape_for_display(k->b_route.banner, 300));
    summary(*k);
    const float avail = ImGui::GetContentRegionAvail().y;
    // The plots take what the position's tokens below (about 130 px) leave.
    const float plot_h = std::clamp(avail - 140.0f, 140.0f, 320.0f);
    const float half = ImGui::GetContentRegionAvail().x * 0.6f;
    ImGui::BeginGroup();
    ImGui::PushID("positions");
    ImGui::BeginChild("##plot", ImVec2(half, plot_h + 8));
    position_plot(c, *k, plot_h);
    ImGui::EndChild();
    ImGui::PopID();
    ImGui::EndGroup();
    ImGui::SameLine();
    m_plot.draw("##kld_histogram", m_series, ImVec2(0, plot_h));
    position_detail(ctx, *k);
}

}  // namespace mlens
