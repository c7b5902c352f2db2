#include "panels/inference_ab_view.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/text/escape.h"
#include "mlens/text/number_format.h"
#include "state/display_text.h"
#include "state/workspace.h"
#include "theme.h"
#include "widgets/plot_frame.h"
#include "widgets/table_cell.h"
#include "widgets/token_chips.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

bool is_gguf_model(const Document& d) { return d.ready() && d.is_model() && d.model()->format == Format::gguf; }

// Documents that can be B, this one first.
std::vector<Document*> b_candidates(PanelContext& ctx) {
    std::vector<Document*> out{&ctx.doc};
    if (ctx.workspace)
        for (const auto& d : ctx.workspace->documents())
            if (d->id != ctx.doc.id && is_gguf_model(*d)) out.push_back(d.get());
    return out;
}

Document* find_b(PanelContext& ctx, uint64_t id) {
    for (Document* d : b_candidates(ctx))
        if (d->id == id) return d;
    return nullptr;
}

std::string b_label(const PanelContext& ctx, const Document& d) { return d.id == ctx.doc.id ? d.title + " (this file again)" : d.title; }

ImU32 with_alpha(const ImVec4& c, float a) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c.x, c.y, c.z, a)); }

}  // namespace

InferenceAbView::InferenceAbView() {
    options.max_tokens = 16;
    options.top_k = 5;
}

void InferenceAbView::pick_default(PanelContext& ctx) {
    if (find_b(ctx, b_document)) return;
    std::vector<Document*> docs = b_candidates(ctx);
    b_document = docs.size() > 1 ? docs[1]->id : ctx.doc.id;
}

Document* InferenceAbView::chosen_b(PanelContext& ctx) {
    pick_default(ctx);
    return find_b(ctx, b_document);
}

bool InferenceAbView::run(PanelContext& ctx, InferenceController& c) {
    Document* b = find_b(ctx, b_document);
    if (!b) return false;
    return c.start<AbOp>(ctx.jobs, {b->path, prompt, options});
}

void InferenceAbView::picker(PanelContext& ctx) {
    Document* b = find_b(ctx, b_document);
    ImGui::SetNextItemWidth(280);
    if (ImGui::BeginCombo("B (compared with this file)", b ? b_label(ctx, *b).c_str() : "choose a model")) {
        for (Document* d : b_candidates(ctx)) {
            ImGui::PushID(static_cast<int>(d->id));
            if (ImGui::Selectable(b_label(ctx, *d).c_str(), d->id == b_document)) b_document = d->id;
            ImGui::PopID();
        }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Any open GGUF file; open more with File > Open");
}

void InferenceAbView::summary(const AbOp::Outcome& ab) {
    const AbSummary& s = ab.result.summary;
    ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("ab_summary", 8, flags)) return;
    const char* headers[] = {"positions", "mean KLD",       "median KLD",         "p99 KLD",
                             "max KLD",   "same top token", "mean top-k overlap", "first divergence"};
    for (const char* h : headers) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ui::text(std::to_string(s.positions));
    for (double v : {s.mean_kld, s.median_kld, s.p99_kld, s.max_kld}) {
        ImGui::TableNextColumn();
        ui::text(significant(v));
    }
    ImGui::TableNextColumn();
    ui::text(percent_text(s.same_top_share));
    ImGui::TableNextColumn();
    ui::text(significant(s.mean_topk_overlap));
    ImGui::TableNextColumn();
    if (s.first_divergence < 0) {
        ui::text_colored(palette().ok, "none");
    } else {
        bool generated = static_cast<size_t>(s.first_divergence) < ab.result.positions.size() &&
            ab.result.positions[static_cast<size_t>(s.first_divergence)].generated;
        ui::text_colored(palette().error, "position " + std::to_string(s.first_divergence) + (generated ? " (generated)" : " (prompt)"));
    }
    ImGui::EndTable();
}

void InferenceAbView::kld_chart(const AbOp::Outcome& ab, float height) {
    const std::vector<AbPosition>& positions = ab.result.positions;
    const AbSummary& s = ab.result.summary;
    PlotRange range{-0.5, static_cast<double>(positions.size()) - 0.5, 0.0, s.max_kld > 0 ? s.max_kld * 1.1 : 1.0};
    PlotFrame f = draw_plot_frame("##kld", ImVec2(0, height), range, "position (after token i)", "KLD(A \xE2\x80\x96 B), nats", true);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const Palette& pal = palette();
    const ImU32 prompt_color = plot_series_color(0), generated_color = plot_series_color(1);
    float bar_w = std::max(1.0f, (f.max.x - f.min.x) / std::max<float>(1.0f, static_cast<float>(positions.size())) * 0.7f);
    ImVec2 mouse = ImGui::GetIO().MousePos;
    bool hovered = ImGui::IsItemHovered() && f.contains(mouse);
    dl->PushClipRect(f.min, f.max, true);
    for (const AbPosition& p : positions) {
        float x = f.x_of(p.index);
        float y = std::min(f.y_of(p.kld), f.max.y - (p.kld > 0 ? 1.0f : 0.0f));
        dl->AddRectFilled(ImVec2(x - bar_w / 2, y), ImVec2(x + bar_w / 2, f.max.y), p.generated ? generated_color : prompt_color);
    }
    if (s.first_divergence >= 0) {
        float x = f.x_of(static_cast<double>(s.first_divergence));
        ImU32 red = ImGui::ColorConvertFloat4ToU32(pal.error);
        dl->AddLine(ImVec2(x, f.min.y), ImVec2(x, f.max.y), red, 2.0f);
        std::string label = "first divergence @ " + std::to_string(s.first_divergence);
        float w = ImGui::CalcTextSize(label.c_str()).x;
        float lx = x + 4 + w > f.max.x ? x - 4 - w : x + 4;
        dl->AddText(ImVec2(lx, f.min.y + 2), red, label.c_str());
    }
    if (hovered) {
        double at = f.x_at(mouse.x) + 0.5;
        if (at >= 0 && at < static_cast<double>(positions.size())) {
            auto i = static_cast<size_t>(at);
            const AbPosition& p = positions[i];
            float x = f.x_of(p.index);
            dl->AddRect(ImVec2(x - bar_w / 2 - 1, f.min.y), ImVec2(x + bar_w / 2 + 1, f.max.y), ImGui::GetColorU32(ImGuiCol_Text));
            std::string tip = "position " + std::to_string(p.index) + (p.generated ? " (generated)" : " (prompt)") + "\nafter " +
                visible_piece_text(i < ab.tokens.size() ? ab.tokens[i].piece : "", 40) + "\nKLD " + significant(p.kld) + "\ntop A " +
                visible_piece_text(ab.top_a[i], 40) + " " + probability_text(p.prob_top_a) + "\ntop B " + visible_piece_text(ab.top_b[i], 40) +
                " " + probability_text(p.prob_top_b) + "\ntop-k overlap " + ui::number_format("%.2f", p.topk_overlap);
            ImGui::BeginTooltip();
            ui::text(tip);
            ImGui::EndTooltip();
        }
    }
    dl->PopClipRect();
    // Legend: prompt vs generated positions.
    float line = ImGui::GetTextLineHeight();
    ImVec2 at(f.max.x - 190, f.min.y + 4);
    dl->AddRectFilled(at, ImVec2(at.x + 10, at.y + 10), prompt_color);
    dl->AddText(ImVec2(at.x + 14, at.y - (line - 10) / 2), ImGui::GetColorU32(ImGuiCol_Text), "prompt");
    dl->AddRectFilled(ImVec2(at.x + 80, at.y), ImVec2(at.x + 90, at.y + 10), generated_color);
    dl->AddText(ImVec2(at.x + 94, at.y - (line - 10) / 2), ImGui::GetColorU32(ImGuiCol_Text), "generated");
    if (s.max_kld == 0)
        dl->AddText(ImVec2(f.min.x + 8, f.min.y + line + 6), ImGui::ColorConvertFloat4ToU32(pal.ok),
                    "KLD is 0 at every position: identical distributions");
}

void InferenceAbView::token_text(PanelContext& ctx, const AbOp::Outcome& ab, float height) {
    const AbResult& r = ab.result;
    const Palette& pal = palette();
    double max_kld = r.summary.max_kld;
    std::vector<TokenChip> chips;
    for (size_t i = 0; i < ab.tokens.size(); ++i) {
        TokenChip chip{ab.tokens[i].piece, std::to_string(i), "", 0u, 0u};
        if (i < r.positions.size()) {
            const AbPosition& p = r.positions[i];
            chip.tooltip = std::string(p.generated ? "generated by A" : "prompt") + " \xC2\xB7 KLD after it " + significant(p.kld) +
                "\ntop A " + visible_piece_text(ab.top_a[i], 40) + " \xC2\xB7 top B " + visible_piece_text(ab.top_b[i], 40);
            if (max_kld > 0 && p.kld > 0) chip.fill = with_alpha(pal.error, 0.12f + 0.5f * static_cast<float>(p.kld / max_kld));
            if (p.generated) chip.border = with_alpha(pal.accent, 1.0f);
            if (static_cast<int64_t>(i) == r.summary.first_divergence) chip.border = with_alpha(pal.error, 1.0f);
        } else {
            chip.tooltip = "last generated token (not fed back, so no position)";
            chip.border = with_alpha(pal.accent, 1.0f);
        }
        chips.push_back(std::move(chip));
    }
    token_chip_box("ab_tokens", chips, ctx.fonts.mono(), height);
}

void InferenceAbView::positions_table(PanelContext& ctx, const AbOp::Outcome& ab) {
    const AbResult& r = ab.result;
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
        ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("ab_positions", 8, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    constexpr ImGuiTableColumnFlags fixed = ImGuiTableColumnFlags_WidthFixed, stretch = ImGuiTableColumnFlags_WidthStretch;
    ui::table_columns({{"pos", fixed, 50},
                       {"after token", stretch, 1.0f},
                       {"KLD", fixed, 90},
                       {"top A", stretch, 1.0f},
                       {"p(A)", fixed, 64},
                       {"top B", stretch, 1.0f},
                       {"p(B)", fixed, 64},
                       {"top-k overlap", fixed, 100}});
    ImFont* mono = ctx.fonts.mono();
    const Palette& pal = palette();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(r.positions.size()));
    while (clipper.Step()) {
        for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
            auto i = static_cast<size_t>(row);
            const AbPosition& p = r.positions[i];
            ImGui::TableNextRow();
            if (static_cast<int64_t>(i) == r.summary.first_divergence)
                ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, with_alpha(pal.error, 0.25f));
            ImGui::TableNextColumn();
            ui::cell_text_colored(p.generated ? pal.accent : pal.dim, std::to_string(p.index) + (p.generated ? "*" : ""));
            ImGui::TableNextColumn();
            ui::cell_piece(i < ab.tokens.size() ? ab.tokens[i].piece : "", 40);
            ImGui::TableNextColumn();
            ImGui::PushFont(mono);
            ui::cell_text(significant(p.kld));
            ImGui::PopFont();
            ImGui::TableNextColumn();
            ui::cell_piece(ab.top_a[i], 40);
            ImGui::TableNextColumn();
            ImGui::PushFont(mono);
            ui::cell_text(probability_text(p.prob_top_a));
            ImGui::PopFont();
            ImGui::TableNextColumn();
            if (p.top_a != p.top_b) ImGui::PushStyleColor(ImGuiCol_Text, pal.error);
            ui::cell_piece(ab.top_b[i], 40);
            if (p.top_a != p.top_b) ImGui::PopStyleColor();
            ImGui::TableNextColumn();
            ImGui::PushFont(mono);
            ui::cell_text(probability_text(p.prob_top_b));
            ImGui::TableNextColumn();
            ui::cell_text(ui::number_format("%.2f", p.topk_overlap));
            ImGui::PopFont();
        }
    }
    ImGui::EndTable();
}

void InferenceAbView::draw(PanelContext& ctx, InferenceController& c) {
    if (!c.can_decode()) {
        ui::text_dim(c.loaded() ? "The model is loaded as vocabulary only: reload it with weights to compare."
                                : "Load the model (A) to compare it with another open GGUF file (B).");
        return;
    }
    if (!b_document) pick_default(ctx);
    picker(ctx);
    ImGui::SameLine(0, 16);
    ImGui::SetNextItemWidth(100);
    ImGui::InputInt("tokens", &options.max_tokens, 1, 8);
    options.max_tokens = std::clamp(options.max_tokens, 0, 4096);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Tokens of A's greedy continuation fed to both models");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(70);
    ImGui::InputInt("top-k", &options.top_k, 0, 0);
    options.top_k = std::clamp(options.top_k, 1, 1000);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("k of the top-k overlap");
    ImGui::SameLine(0, 16);
    ImGui::BeginDisabled(c.busy() || !find_b(ctx, b_document));
    if (ImGui::Button("Compare")) run(ctx, c);
    ImGui::EndDisabled();
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("prompt").x - ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::InputText("prompt", &prompt);
    ImGui::PushTextWrapPos(0.0f);
    ui::text_dim(
        "A = this file (reference), fed its own greedy continuation; B sees the same tokens. "
        "Position i is the next-token distribution after token i.");
    ImGui::PopTextWrapPos();

    if (const auto& e = error_of(c.latest<AbOp>())) {
        ImGui::PushTextWrapPos(0);
        if (e->code == ErrorCode::E_VOCAB_MISMATCH)
            ui::text_colored(palette().error, "The two models do not share a vocabulary, so their distributions cannot be compared.");
        ui::job_error_text(*e);
        ImGui::PopTextWrapPos();
    }
    const auto& ab = outcome_of(c.latest<AbOp>());
    if (!ab) return;
    ui::text_dim("B: " + escape_for_display(ab->b_model, 300));
    if (!ab->b_route.banner.empty()) ui::text_colored(palette().warning, "B " + escape_for_display(ab->b_route.banner, 300));
    summary(*ab);
    float avail = ImGui::GetContentRegionAvail().y;
    kld_chart(*ab, std::clamp(avail * 0.35f, 140.0f, 260.0f));
    ui::text_dim("tokens (position below; shaded by KLD, generated ones outlined, the first divergence in red):");
    token_text(ctx, *ab, std::clamp(avail * 0.18f, 64.0f, 150.0f));
    positions_table(ctx, *ab);
}

}  // namespace mlens
