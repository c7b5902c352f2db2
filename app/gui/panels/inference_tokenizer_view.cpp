#include "panels/inference_tokenizer_view.h"

#include <algorithm>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "state/display_text.h"
#include "theme.h"
#include "widgets/token_chips.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

std::vector<TokenChip> chips_of(const std::vector<TokenPiece>& tokens) {
    std::vector<TokenChip> chips;
    chips.reserve(tokens.size());
    const ImU32 control = ImGui::ColorConvertFloat4ToU32(palette().accent);
    for (const TokenPiece& t : tokens)
        chips.push_back({t.piece, std::to_string(t.id), t.control ? "control token" : "", t.control ? control : 0u});
    return chips;
}

void error_text(const Error& e) {
    ImGui::PushTextWrapPos(0);
    ui::text_colored(palette().error, std::string(code_name(e.code)) + ": " + escape_for_display(e.message, 1000));
    ImGui::PopTextWrapPos();
}

}  // namespace

void InferenceTokenizerView::refresh(InferenceController& c) {
    if (c.session_serial() != m_serial) {
        m_serial = c.session_serial();
        m_stale = true;
        m_chat.reset();
    }
    if (!m_stale || c.busy() || !c.loaded()) return;
    m_result = c.tokenize(text, options);
    m_stale = false;
}

void InferenceTokenizerView::run(InferenceController& c) {
    if (c.busy() || !c.loaded()) return;
    m_stale = true;
    refresh(c);
    m_chat = c.chat_template();
    if (*m_chat) m_chat_prompt = escape_multiline((*m_chat)->prompt);
}

void InferenceTokenizerView::draw_chat(PanelContext& ctx) {
    if (!m_chat) return;
    if (!*m_chat) {
        error_text(m_chat->error());
        return;
    }
    const ChatRender& r = **m_chat;
    ui::text_dim("sample conversation (system, user, assistant, user) rendered by llama.cpp: " + counted_as(ui::with_separators(r.prompt.size()), r.prompt.size(), "byte") +
                 ", " + plural(r.tokens.size(), "token"));
    float h = std::clamp(ImGui::GetContentRegionAvail().y * 0.4f, 80.0f, 220.0f);
    ImGui::PushFont(ctx.fonts.mono());
    ImGui::InputTextMultiline("##chat_prompt", &m_chat_prompt, ImVec2(-1, h), ImGuiInputTextFlags_ReadOnly);
    ImGui::PopFont();
    token_chip_box("chat_tokens", chips_of(r.tokens), ctx.fonts.mono(), ImGui::GetContentRegionAvail().y);
}

void InferenceTokenizerView::draw(PanelContext& ctx, InferenceController& c) {
    refresh(c);
    if (!c.loaded()) {
        ui::text_dim("Load the model (vocabulary only is enough) to tokenize with llama.cpp.");
        return;
    }
    float box_h = ImGui::GetTextLineHeight() * 3 + ImGui::GetStyle().FramePadding.y * 2;
    if (ImGui::InputTextMultiline("##text", &text, ImVec2(-1, box_h))) m_stale = true;
    if (ImGui::Checkbox("add special (BOS/EOS)", &options.add_special)) m_stale = true;
    ImGui::SameLine();
    if (ImGui::Checkbox("parse special (control-token text becomes one token)", &options.parse_special)) m_stale = true;
    ImGui::SameLine(0, 24);
    ImGui::BeginDisabled(c.busy());
    if (ImGui::Button("Render chat template")) run(c);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Renders a small conversation with the file's template through llama.cpp");

    if (m_result && !*m_result) error_text(m_result->error());
    if (m_result && *m_result) {
        const TokenizeOutcome& r = **m_result;
        ui::text(std::to_string(r.tokens.size()) + (r.tokens.size() == 1 ? " token" : " tokens"));
        ImGui::SameLine();
        ui::text_dim("(\xC2\xB7 = space, \\n \\t = escapes, <0xNN> = byte; hover a chip for its bytes)");
        float avail = ImGui::GetContentRegionAvail().y;
        float max_h = m_chat ? std::clamp(avail * 0.3f, 60.0f, 200.0f) : avail - ImGui::GetTextLineHeightWithSpacing() * 3;
        token_chip_box("tokens", chips_of(r.tokens), ctx.fonts.mono(), max_h);
        ui::text_dim("detokenized (round trip)");
        ImGui::SameLine();
        if (r.round_trip == text)
            ui::text_colored(palette().ok, "same as the input");
        else
            ui::text_colored(palette().warning, "differs from the input");
        if (r.round_trip != text && options.add_special) {
            ImGui::SameLine();
            ui::text_dim("(tokens added by add special are part of it)");
        }
        // The UI font: it has the glyphs of every vocabulary piece.
        ImGui::PushTextWrapPos(0);
        ui::text(escape_for_display(r.round_trip, 2000));
        ImGui::PopTextWrapPos();
    }
    if (m_chat) {
        ImGui::Separator();
        draw_chat(ctx);
    }
}

}  // namespace mlens
