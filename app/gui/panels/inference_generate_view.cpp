#include "panels/inference_generate_view.h"

#include <algorithm>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "mlens/text/number_format.h"
#include "state/display_text.h"
#include "theme.h"
#include "widgets/table_cell.h"
#include "widgets/token_chips.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr int kMaxTokens = 4096;
constexpr size_t kShownCandidates = 5;

std::string candidates_text(const GenerationStep& s) {
    std::string out;
    for (const TokenCandidate& c : s.candidates)
        out += "\n  " + std::to_string(c.id) + "  " + visible_piece_text(c.piece, 40) + "  " + probability_text(c.prob);
    return out;
}

}  // namespace

InferenceGenerateView::InferenceGenerateView() {
    options.max_tokens = 16;
    options.n_candidates = static_cast<int>(kShownCandidates);
}

bool InferenceGenerateView::run(PanelContext& ctx, InferenceController& c) {
    GenerateOptions o = options;
    o.sampling.temperature = sample ? std::max(0.01f, temperature) : 0.0f;
    m_rows_seen = 0;
    if (!c.start<GenerateOp>(ctx.jobs, {prompt, o})) return false;
    m_target = o.max_tokens;
    return true;
}

void InferenceGenerateView::settings(PanelContext& ctx, InferenceController& c) {
    float box_h = ImGui::GetTextLineHeight() * 2 + ImGui::GetStyle().FramePadding.y * 2;
    ImGui::InputTextMultiline("##prompt", &prompt, ImVec2(-1, box_h));
    ImGui::SetNextItemWidth(110);
    ImGui::InputInt("max tokens", &options.max_tokens, 1, 16);
    options.max_tokens = std::clamp(options.max_tokens, 1, kMaxTokens);
    ImGui::SameLine(0, 16);
    if (ImGui::RadioButton("greedy", !sample)) sample = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("sample", sample)) sample = true;
    if (sample) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(110);
        ImGui::SliderFloat("temperature", &temperature, 0.05f, 2.0f, "%.2f");
        ImGui::SameLine();
        ImGui::SetNextItemWidth(90);
        ImGui::InputInt("top-k", &options.sampling.top_k, 0, 0);
        options.sampling.top_k = std::max(0, options.sampling.top_k);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(110);
        ImGui::SliderFloat("top-p", &options.sampling.top_p, 0.05f, 1.0f, "%.2f");
        ImGui::SameLine();
        ImGui::SetNextItemWidth(110);
        ImGui::InputScalar("seed", ImGuiDataType_U64, &options.sampling.seed);
    }
    ImGui::SameLine(0, 16);
    ImGui::Checkbox("stop at end of generation", &options.stop_at_eog);
    bool running = c.running<GenerateOp>();
    ImGui::BeginDisabled(c.busy() || !c.can_decode());
    if (ImGui::Button("Run")) run(ctx, c);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!running);
    if (ImGui::Button("Stop")) c.cancel();
    ImGui::EndDisabled();
    ImGui::SameLine(0, 16);
    status(c);
}

void InferenceGenerateView::status(const InferenceController& c) {
    if (c.running<GenerateOp>()) {
        ui::text("generating\xE2\x80\xA6 " + std::to_string(c.stream<GenerateOp>().steps.size()) + " / " + std::to_string(m_target));
        return;
    }
    if (const auto& g = outcome_of(c.latest<GenerateOp>())) {
        const GenerationResult& r = g->result;
        ui::text("prompt " + plural(r.prompt_tokens.size(), "token") + " at " + ui::number_format("%.1f", r.prompt_tokens_per_s) +
                 " tokens/s \xC2\xB7 generated " + plural(r.steps.size(), "token") + " at " +
                 ui::number_format("%.1f", r.generation_tokens_per_s) + " tokens/s");
        ImGui::SameLine();
        ui::text_dim("\xC2\xB7 stop: " + std::string(stop_reason_name(r.stop)));
        return;
    }
    if (const auto& e = error_of(c.latest<GenerateOp>())) {
        if (e->code == ErrorCode::E_CANCELLED)
            ui::text_colored(palette().warning, "stopped after " + std::to_string(c.stream<GenerateOp>().steps.size()) + " tokens");
        else
            ui::text_colored(palette().error, std::string(code_name(e->code)) + ": " + escape_for_display(e->message, 600));
    }
}

void InferenceGenerateView::steps_table(PanelContext& ctx, const InferenceController& c) {
    const std::vector<GenerationStep>& steps = c.stream<GenerateOp>().steps;
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
        ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("steps", 4 + static_cast<int>(kShownCandidates), flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("step", ImGuiTableColumnFlags_WidthFixed, 40);
    ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthStretch, 1.2f);
    ImGui::TableSetupColumn("id", ImGuiTableColumnFlags_WidthFixed, 56);
    ImGui::TableSetupColumn("prob", ImGuiTableColumnFlags_WidthFixed, 56);
    for (size_t k = 0; k < kShownCandidates; ++k)
        ImGui::TableSetupColumn(("candidate " + std::to_string(k + 1)).c_str(), ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableHeadersRow();
    ImFont* mono = ctx.fonts.mono();
    const Palette& pal = palette();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(steps.size()));
    while (clipper.Step()) {
        for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
            const GenerationStep& s = steps[static_cast<size_t>(row)];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ui::cell_text_dim(std::to_string(row));
            ImGui::TableNextColumn();
            ui::cell_piece(s.piece, 40);
            if (ImGui::IsItemHovered()) ui::piece_tooltip(s.piece);
            ImGui::PushFont(mono);
            ImGui::TableNextColumn();
            ui::cell_text(std::to_string(s.token));
            ImGui::TableNextColumn();
            ui::cell_text(probability_text(s.prob));
            ImGui::PopFont();
            for (size_t k = 0; k < kShownCandidates; ++k) {
                ImGui::TableNextColumn();
                if (k >= s.candidates.size()) continue;
                const TokenCandidate& cand = s.candidates[k];
                // Piece above its probability: five candidates fit a narrow center pane.
                ImGui::BeginGroup();
                ui::cell_piece(cand.piece, 24);
                ImGui::PushFont(mono);
                ui::cell_text_colored(cand.id == s.token ? pal.ok : pal.dim, probability_text(cand.prob));
                ImGui::PopFont();
                ImGui::EndGroup();
                if (ImGui::IsItemHovered())
                    ImGui::SetTooltip("id %d  logit %.3f  p %s%s", cand.id, static_cast<double>(cand.logit),
                                      probability_text(cand.prob).c_str(), cand.id == s.token ? "  (chosen)" : "");
            }
        }
    }
    if (c.running<GenerateOp>() && steps.size() > m_rows_seen) ImGui::SetScrollHereY(1.0f);
    m_rows_seen = steps.size();
    ImGui::EndTable();
}

void InferenceGenerateView::draw(PanelContext& ctx, InferenceController& c) {
    if (!c.loaded()) {
        ui::text_dim("Load the model to generate.");
        return;
    }
    if (!c.can_decode()) {
        ui::text_dim("The model is loaded as vocabulary only: uncheck \"vocabulary only\" and reload to generate.");
        return;
    }
    settings(ctx, c);
    const std::vector<TokenPiece>& prompt_tokens = c.stream<GenerateOp>().prompt;
    const std::vector<GenerationStep>& steps = c.stream<GenerateOp>().steps;
    if (prompt_tokens.empty() && steps.empty()) return;

    std::vector<TokenChip> chips;
    const ImU32 prompt_fill = ImGui::GetColorU32(ImGuiCol_WindowBg);
    const ImU32 generated = ImGui::ColorConvertFloat4ToU32(palette().accent);
    for (const TokenPiece& t : prompt_tokens) chips.push_back({t.piece, std::to_string(t.id), "prompt token", 0u, prompt_fill});
    for (size_t i = 0; i < steps.size(); ++i)
        chips.push_back({steps[i].piece, probability_text(steps[i].prob),
                         "step " + std::to_string(i) + " \xC2\xB7 id " + std::to_string(steps[i].token) +
                             " \xC2\xB7 top candidates:" + candidates_text(steps[i]),
                         generated, 0u});
    ui::text_dim("prompt tokens (id below), then generated tokens (their probability below; hover for the candidates)");
    token_chip_box("generated_chips", chips, ctx.fonts.mono(), std::max(70.0f, ImGui::GetContentRegionAvail().y * 0.35f));
    if (const auto& g = outcome_of(c.latest<GenerateOp>())) {
        ui::text_dim("text");
        ImGui::SameLine();
        ImGui::PushTextWrapPos(0);
        ui::text(escape_for_display(g->result.text, 2000));
        ImGui::PopTextWrapPos();
    }
    steps_table(ctx, c);
}

}  // namespace mlens
