#include "panels/tokenizer_panel.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/model/enum_names.h"
#include "mlens/text/escape.h"
#include "state/display_text.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

constexpr size_t kTemplateBytes = 1u << 20;
constexpr const char* kNoGlyphFilter = "tokens with characters no font draws";

ImVec4 token_type_color(int64_t type) {
    const Palette& p = palette();
    switch (type) {
        case 2:
            return p.warning;  // UNKNOWN
        case 3:
            return p.accent;  // CONTROL
        case 4:
            return p.marker;  // USER_DEFINED
        case 6:
            return p.byte_token;  // BYTE
        default:
            return p.dim;  // NORMAL, UNUSED, UNDEFINED
    }
}

std::string score_text(const Scalar& s) {
    if (s.type == ValueType::f32 || s.type == ValueType::f64) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4g", s.as_double());
        return buf;
    }
    return s.to_string();
}

const SpecialToken* special_role(const TokenizerInfo& t, uint64_t id) {
    for (const SpecialToken& s : t.special)
        if (s.id >= 0 && static_cast<uint64_t>(s.id) == id) return &s;
    return nullptr;
}

}  // namespace

void TokenizerPanel::draw_summary(Document& doc) {
    const TokenizerInfo& t = doc.index()->tokenizer;
    std::string line = ui::with_separators(t.count()) + " tokens";
    if (!t.model.empty()) line = "model " + t.model + " \xC2\xB7 " + line;
    if (!t.pre.empty()) line += " \xC2\xB7 pre " + t.pre;
    if (t.merges) line += " \xC2\xB7 " + ui::with_separators(t.merges) + " merges";
    ui::text(line);
    if (t.special.empty()) return;
    ui::text_dim("special");
    for (const SpecialToken& s : t.special) {
        ImGui::SameLine();
        std::string piece;
        if (t.tokens && s.id >= 0 && static_cast<uint64_t>(s.id) < t.count())
            piece = visible_piece_text(t.tokens->string_at(static_cast<uint64_t>(s.id), 256), 24, t.piece_encoding_of(static_cast<uint64_t>(s.id)));
        else
            piece = "out of range";
        std::string label = s.role + " " + std::to_string(s.id) + "  " + piece + "##" + s.role;
        if (ImGui::SmallButton(label.c_str()) && s.id >= 0 && static_cast<uint64_t>(s.id) < t.count()) {
            m_scroll_to = static_cast<uint64_t>(s.id);
            doc.select({SelectionKind::token, static_cast<size_t>(s.id)});
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("tokenizer.ggml.%s_token_id: go to token", s.role.c_str());
    }
}

void TokenizerPanel::draw_vocabulary(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const TokenizerInfo& t = doc.index()->tokenizer;
    const ArrayIndex& tokens = *t.tokens;
    m_search.poll();
    bool focus = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && ui::ctrl_pressed('F');
    if (ui::search_box("search", "search piece text or id (Ctrl+F)", m_query, 340, focus))
        m_search.start(ctx.jobs, t.tokens, "tokenizer.ggml.tokens", m_query, t.encoding);
    ImGui::SameLine();
    bool filtered = m_search.active();
    const bool byte_level = t.encoding == PieceEncoding::byte_level;
    const std::vector<uint64_t>& matches = m_search.matches();
    if (filtered && m_search.running())
        ui::text_dim("searching\xE2\x80\xA6 " + std::to_string(static_cast<int>(m_search.progress() * 100)) + "%");
    else if (filtered && m_search.query() == kNoGlyphFilter)
        ui::text_dim(ui::with_separators(matches.size()) + " of " + ui::with_separators(tokens.count) + " tokens use characters no font draws");
    else if (filtered)
        ui::text_dim(ui::with_separators(matches.size()) + " of " + ui::with_separators(tokens.count) + " match");
    else if (byte_level)
        ui::text_dim("shown as text: \xC2\xB7 = space, \\n = newline; Stored = as in the file");
    else
        ui::text_dim("\xC2\xB7 = space   \xE2\x96\x81 \xC4\xA0 = word start   <0xNN> = byte");
    if (std::string missing = missing_fonts_text(ctx.fonts.missing()); !missing.empty()) {
        // The characters no font draws, as a filter: the tokens that use them.
        const bool listing = filtered && m_search.query() == kNoGlyphFilter;
        if (ImGui::SmallButton(listing ? "Show every token" : "List these tokens")) {
            m_query.clear();
            if (listing)
                m_search.clear();
            else
                m_search.start_code_points(ctx.jobs, t.tokens, kNoGlyphFilter, ctx.fonts.missing_code_points(), t.encoding);
        }
        ImGui::SameLine();
        ImGui::PushTextWrapPos(0.0f);
        ui::text_colored(palette().warning, missing);
        ImGui::PopTextWrapPos();
    }

    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV |
        ImGuiTableFlags_Hideable;
    if (!ImGui::BeginTable("vocabulary", byte_level ? 6 : 5, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("ID", ImGuiTableColumnFlags_WidthFixed, 80);
    ImGui::TableSetupColumn("Piece", ImGuiTableColumnFlags_WidthStretch);
    if (byte_level) ImGui::TableSetupColumn("Stored", ImGuiTableColumnFlags_WidthStretch, 0.6f);
    ImGui::TableSetupColumn("Type", ImGuiTableColumnFlags_WidthFixed, 110);
    ImGui::TableSetupColumn("Score", ImGuiTableColumnFlags_WidthFixed, 90);
    ImGui::TableSetupColumn("Bytes", ImGuiTableColumnFlags_WidthFixed, 50);
    ImGui::TableHeadersRow();

    float row_h = ImGui::GetTextLineHeightWithSpacing();
    uint64_t rows = filtered ? matches.size() : tokens.count;
    if (m_scroll_to) {
        std::optional<uint64_t> row;
        if (!filtered)
            row = *m_scroll_to;
        else if (auto it = std::find(matches.begin(), matches.end(), *m_scroll_to); it != matches.end())
            row = static_cast<uint64_t>(it - matches.begin());
        if (row) ImGui::SetScrollY(std::max(0.0f, static_cast<float>(*row) * row_h - ImGui::GetWindowHeight() * 0.3f));
        m_scroll_to.reset();
    }
    ImFont* mono = ctx.fonts.mono();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(std::min<uint64_t>(rows, INT32_MAX)), row_h);
    while (clipper.Step()) {
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            uint64_t id = filtered ? matches[static_cast<size_t>(r)] : static_cast<uint64_t>(r);
            std::string raw = tokens.string_at(id, 1024);
            const PieceEncoding encoding = t.piece_encoding_of(id);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(r);
            ImGui::PushFont(mono);
            bool selected = doc.selection == Selection{SelectionKind::token, static_cast<size_t>(id)};
            if (ImGui::Selectable(std::to_string(id).c_str(), selected,
                                  ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap))
                doc.select({SelectionKind::token, static_cast<size_t>(id)});
            ImGui::PopFont();
            std::vector<std::pair<std::string, std::string>> copies{{"piece", visible_piece_text(raw, 1024, encoding)}, {"id", std::to_string(id)}};
            if (byte_level) copies.emplace_back("stored piece", visible_piece_text(raw, 1024));
            ui::copy_menu("copy", copies);
            ImGui::PopID();
            ImGui::TableNextColumn();
            ImGui::BeginGroup();
            ui::piece(visible_piece(raw, 160, encoding));
            ImGui::EndGroup();
            if (ImGui::IsItemHovered()) ui::piece_tooltip(raw, encoding);
            if (const SpecialToken* s = special_role(t, id)) {
                ImGui::SameLine();
                ui::text_colored(palette().accent, "  [" + s->role + "]");
            }
            if (byte_level) {
                ImGui::TableNextColumn();
                ImGui::BeginGroup();
                ui::piece(visible_piece(raw, 160));
                ImGui::EndGroup();
                if (ImGui::IsItemHovered()) ui::piece_tooltip(raw);
            }
            ImGui::TableNextColumn();
            if (t.types && id < t.types->count) {
                int64_t type = t.types->scalar_at(id).as_int();
                const char* name = token_type_name(type);
                ui::text_colored(token_type_color(type), name ? name : std::to_string(type));
            }
            ImGui::TableNextColumn();
            if (t.scores && id < t.scores->count) {
                ImGui::PushFont(mono);
                ui::text(score_text(t.scores->scalar_at(id)));
                ImGui::PopFont();
            }
            ImGui::TableNextColumn();
            ui::text_dim(std::to_string(tokens.string_length_at(id)));
        }
    }
    ImGui::EndTable();
}

void TokenizerPanel::draw_template(PanelContext& ctx) {
    const Document& doc = ctx.doc;
    const MetadataEntry& e = doc.model()->metadata[*doc.index()->tokenizer.chat_template];
    if (!m_template_built) {
        m_template = escape_multiline(e.value.string_value(kTemplateBytes), kTemplateBytes);
        if (e.value.string_length() > kTemplateBytes)
            m_template += "\n\xE2\x80\xA6 (" + std::to_string(e.value.string_length() - kTemplateBytes) + " more bytes)";
        m_template_built = true;
    }
    ui::text_dim(ui::with_separators(e.value.string_length()) +
                 " bytes \xC2\xB7 shown as text only: the template is never rendered or executed");
    ImGui::PushFont(ctx.fonts.mono());
    ImGui::InputTextMultiline("##template", &m_template, ImVec2(-1, -1), ImGuiInputTextFlags_ReadOnly);
    ImGui::PopFont();
}

bool TokenizerPanel::accept_link(std::string_view link, Document&) {
    if (link.starts_with("parity:")) {
        link.remove_prefix(7);
        const size_t sep = link.find("::");
        m_linked_parity.emplace(std::string(link.substr(0, sep)), sep == std::string_view::npos ? std::string() : std::string(link.substr(sep + 2)));
        return true;
    }
    if (!link.starts_with("token:")) return false;
    link.remove_prefix(6);
    uint64_t id = 0;
    auto [end, ec] = std::from_chars(link.data(), link.data() + link.size(), id);
    if (ec != std::errc() || end != link.data() + link.size()) return false;
    m_linked_token = id;
    return true;
}

void TokenizerPanel::draw(PanelContext& ctx) {
    Document& doc = ctx.doc;
    const TokenizerInfo& t = doc.index()->tokenizer;
    if (auto id = std::exchange(m_linked_token, std::nullopt)) {
        if (*id < t.count()) {
            m_scroll_to = *id;
            m_select_vocabulary = true;
            doc.select({SelectionKind::token, static_cast<size_t>(*id)});
        }
    }
    if (auto parity = std::exchange(m_linked_parity, std::nullopt)) {
        m_parity.start(ctx, parity->first, parity->second);
        m_select_parity = true;
    }
    if (!t.tokens) {
        ui::text_dim("This file has no tokenizer.ggml.tokens array.");
        if (t.chat_template) draw_template(ctx);
        return;
    }
    draw_summary(doc);
    if (!ImGui::BeginTabBar("tokenizer_tabs")) return;
    if (ImGui::BeginTabItem("Vocabulary", nullptr, std::exchange(m_select_vocabulary, false) ? ImGuiTabItemFlags_SetSelected : 0)) {
        draw_vocabulary(ctx);
        ImGui::EndTabItem();
    }
    if (t.chat_template && ImGui::BeginTabItem("Chat template")) {
        draw_template(ctx);
        ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Parity", nullptr, std::exchange(m_select_parity, false) ? ImGuiTabItemFlags_SetSelected : 0)) {
        if (auto id = m_parity.draw(ctx)) m_linked_token = *id;
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

void TokenizerPanel::draw_windows(PanelContext&) { m_parity.draw_windows(); }

}  // namespace mlens
