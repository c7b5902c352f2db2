#include "panels/tokenizer_parity_view.h"

#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/io/text_file.h"
#include "mlens/text/escape.h"
#include "mlens/text/byte_level_bpe.h"
#include "mlens/text/plural.h"
#include "state/job_outcome.h"
#include "theme.h"
#include "widgets/token_chips.h"
#include "widgets/ui.h"

namespace mlens {

namespace fs = std::filesystem;

namespace {

const char* side_text(const std::string& s) { return s.empty() ? "(none)" : s.c_str(); }

// "128,256 tokens": the count as the rest of the app writes it.
std::string counted(uint64_t n, std::string_view noun) { return counted_as(ui::with_separators(n), n, noun); }

bool is_token_kind(ParityKind k) { return k == ParityKind::token || k == ParityKind::token_missing || k == ParityKind::token_type || k == ParityKind::score; }

// Chips for one side; `pieces` are the bytes each chip shows (a byte-level token decoded).
std::vector<TokenChip> chips_of(const std::vector<ParityToken>& tokens, const std::vector<std::string>& pieces, uint64_t start,
                                std::optional<uint64_t> first) {
    std::vector<TokenChip> chips;
    for (size_t i = 0; i < tokens.size(); ++i) {
        TokenChip c;
        c.piece = pieces[i];
        c.caption = std::to_string(tokens[i].id);
        c.tooltip = "token " + std::to_string(start + i);
        if (first && start + i >= *first) c.border = ImGui::GetColorU32(palette().warning);
        chips.push_back(std::move(c));
    }
    return chips;
}

}  // namespace

void TokenizerParityView::start(PanelContext& ctx, const std::string& tokenizer_json, const std::string& text_file) {
    m_json_path = tokenizer_json;
    m_text_path = text_file;
    m_prefilled = true;
    m_job.cancel();
    m_status.clear();
    m_job = ctx.jobs.start("tokenizer parity", [model = ctx.doc.model(), path = ctx.doc.path, json = tokenizer_json,
                                                text_file](JobContext& job) -> Result<TokenizerParityResult> {
        TokenizerParityResult r;
        auto check = check_tokenizer_parity(*model, json);
        if (!check) return check.error();
        r.check = std::move(*check);
        if (!text_file.empty()) {
            auto text = read_text_file(text_file, kMaxCorpusTextBytes);
            if (!text) return text.error();
            auto compared = compare_text_tokenization_of(path, r.check.json, *text, 120, &job);
            if (!compared) return compared.error();
            r.text = std::move(*compared);
            r.text_path = text_file;
        }
        return r;
    });
}

void TokenizerParityView::poll() {
    std::optional<TokenizerParityResult> r;
    if (!take_finished(m_job, r, m_status)) return;
    if (r) m_result = std::move(r);
}

void TokenizerParityView::draw_inputs(PanelContext& ctx) {
    if (!m_prefilled) {
        m_prefilled = true;
        std::error_code ec;
        const fs::path beside = fs::path(ctx.doc.path).parent_path() / "tokenizer.json";
        if (fs::is_regular_file(beside, ec)) m_json_path = beside.string();
    }
    const float label = ImGui::CalcTextSize("tokenizer.json ").x;
    const float browse = ImGui::CalcTextSize("Browse\xE2\x80\xA6").x + 2 * ImGui::GetStyle().FramePadding.x;
    auto path_row = [&](const char* text, const char* id, std::string& value, const char* hint) {
        ImGui::AlignTextToFramePadding();
        ui::text_dim(text);
        ImGui::SameLine(label + ImGui::GetStyle().ItemSpacing.x);
        ImGui::SetNextItemWidth(-(browse + ImGui::GetStyle().ItemSpacing.x));
        ImGui::InputTextWithHint(id, hint, &value);
        ImGui::SameLine();
        ImGui::PushID(id);
        if (ImGui::Button("Browse\xE2\x80\xA6")) {
            m_choosing = &value;
            m_chooser.open_any_file(value.empty() ? fs::path(ctx.doc.path).parent_path().string() : fs::path(value).parent_path().string());
        }
        ImGui::PopID();
    };
    path_row("tokenizer.json", "##parity_json", m_json_path, "the Hugging Face tokenizer.json to compare with");
    path_row("text", "##parity_text", m_text_path, "optional: a UTF-8 text file to tokenize on both sides");
    const bool running = static_cast<bool>(m_job);
    ImGui::BeginDisabled(running || m_json_path.empty());
    if (ImGui::Button("Compare")) start(ctx, m_json_path, m_text_path);
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (running) {
        if (ImGui::Button("Cancel")) m_job.cancel();
        ImGui::SameLine();
        ui::text_dim(m_text_path.empty() ? "comparing\xE2\x80\xA6" : "comparing and tokenizing\xE2\x80\xA6");
    } else if (!m_status.empty()) {
        ui::text_colored(palette().error, m_status);
    } else {
        ui::text_dim("Hugging Face's tokenizers reads the tokenizer.json; llama.cpp tokenizes for the GGUF.");
    }
}

void TokenizerParityView::draw_summary(const TokenizerParityResult& r) {
    const TokenizerParity& p = r.check.parity;
    ui::label_value("GGUF", std::string("model ") + side_text(p.gguf_model) + " \xC2\xB7 pre " + side_text(p.gguf_pre) + " \xC2\xB7 " +
                                counted(p.gguf_tokens, "token") + " \xC2\xB7 " + counted(p.gguf_merges, "merge"));
    ui::label_value("tokenizer.json", std::string(side_text(p.json_model)) + (p.expected_model.empty() ? "" : " (converts to " + p.expected_model + ")") +
                                          " \xC2\xB7 " + counted(p.json_tokens, "token") + " (" + ui::with_separators(p.json_added) + " added) \xC2\xB7 " +
                                          counted(p.json_merges, "merge"));
    if (p.pre_checked)
        ui::label_value("pre-tokenizer", p.pre_names.empty() ? "unknown to the pinned converter (chkhsh " + p.pre_hash.substr(0, 16) + "\xE2\x80\xA6)"
                                                             : "\"" + p.pre_names.back() + "\" by the converter's check text (" + r.check.library + ")");
    else if (!r.check.pre_note.empty())
        ui::label_value("pre-tokenizer", escape_for_display(r.check.pre_note));
    const uint64_t n = p.difference_count();
    if (n == 0) {
        ui::text_colored(palette().ok, "No differences between the vocabularies.");
        return;
    }
    std::string totals;
    for (size_t k = 0; k < kParityKinds; ++k)
        if (p.total[k]) totals += (totals.empty() ? "" : " \xC2\xB7 ") + ui::with_separators(p.total[k]) + " " + parity_kind_name(static_cast<ParityKind>(k));
    ui::text_colored(palette().warning, plural(n, "difference") + ": " + totals);
}

std::optional<uint64_t> TokenizerParityView::draw_differences(const TokenizerParity& p) {
    std::optional<uint64_t> clicked;
    if (p.difference_count() == 0) return clicked;
    ImGui::SetNextItemWidth(ImGui::CalcTextSize("token_missing (1,000,000)").x + 40);
    const std::string preview = m_kind < 0 ? "every kind" : parity_kind_name(static_cast<ParityKind>(m_kind));
    if (ImGui::BeginCombo("##parity_kind", preview.c_str())) {
        if (ImGui::Selectable("every kind", m_kind < 0)) m_kind = -1;
        for (size_t k = 0; k < kParityKinds; ++k)
            if (p.total[k] &&
                ImGui::Selectable((std::string(parity_kind_name(static_cast<ParityKind>(k))) + " (" + ui::with_separators(p.total[k]) + ")").c_str(),
                                  m_kind == static_cast<int>(k)))
                m_kind = static_cast<int>(k);
        ImGui::EndCombo();
    }
    if (p.differences.size() < p.difference_count()) {
        ImGui::SameLine();
        ui::text_dim("listing at most " + ui::with_separators(kMaxListedPerKind) + " of each kind");
    }
    std::vector<const ParityDifference*> rows;
    for (const ParityDifference& d : p.differences)
        if (m_kind < 0 || static_cast<int>(d.kind) == m_kind) rows.push_back(&d);
    const float height = std::max(ImGui::GetContentRegionAvail().y * 0.55f, ImGui::GetTextLineHeightWithSpacing() * 6);
    constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable;
    if (!ImGui::BeginTable("parity_differences", 5, kFlags, ImVec2(0, height))) return clicked;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Kind", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("token_missing").x);
    ImGui::TableSetupColumn("Id / rank", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("Id / rank").x);
    ImGui::TableSetupColumn("GGUF", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("tokenizer.json", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("Why", ImGuiTableColumnFlags_WidthStretch, 2.2f);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(rows.size()));
    while (clipper.Step())
        for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
            const ParityDifference& d = *rows[static_cast<size_t>(i)];
            ImGui::TableNextRow();
            ImGui::PushID(i);
            ImGui::TableNextColumn();
            ui::text(parity_kind_name(d.kind));
            ImGui::TableNextColumn();
            if (d.id && is_token_kind(d.kind) && *d.id >= 0) {
                if (ImGui::SmallButton(std::to_string(*d.id).c_str())) clicked = static_cast<uint64_t>(*d.id);
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show token %lld in the Vocabulary tab", static_cast<long long>(*d.id));
            } else if (d.id) {
                ui::text(std::to_string(*d.id));
            }
            ImGui::TableNextColumn();
            ui::text(escape_for_display(d.gguf, 80));
            ImGui::TableNextColumn();
            ui::text(escape_for_display(d.json, 80));
            ImGui::TableNextColumn();
            ImGui::PushTextWrapPos(0.0f);
            ui::text(escape_for_display(d.message, 400));
            ImGui::PopTextWrapPos();
            ImGui::PopID();
        }
    ImGui::EndTable();
    return clicked;
}

void TokenizerParityView::draw_text(const TokenizerParityResult& r) {
    if (!r.text) return;
    const TextTokenParity& t = *r.text;
    ImGui::Separator();
    ui::label_value("text", escape_for_display(r.text_path) + " \xC2\xB7 " + counted(t.text_bytes, "byte") + " \xC2\xB7 llama.cpp " +
                                counted(t.llama_count, "token") + " \xC2\xB7 " + r.check.library + " " + counted(t.hf_count, "token"));
    if (t.equal) {
        ui::text_colored(palette().ok, "The same ids on both sides.");
        return;
    }
    ui::text_colored(palette().warning, "First difference at token " + ui::with_separators(*t.first_token) + ", byte " +
                                            ui::with_separators(*t.first_byte) + " of the text (outlined from there on):");
    // llama.cpp's pieces are bytes already; the library's token strings are decoded the way the
    // Vocabulary tab decodes a byte-level vocabulary, so both rows show the same text.
    std::vector<std::string> llama_pieces, hf_pieces;
    for (const ParityToken& p : t.llama_context) llama_pieces.push_back(p.piece);
    const bool byte_level = r.check.parity.expected_model == "gpt2";
    for (const ParityToken& p : t.hf_context) {
        std::optional<std::string> decoded = byte_level ? byte_level_decode(p.piece) : std::nullopt;
        hf_pieces.push_back(decoded ? *decoded : p.piece);
    }
    ui::text_dim("llama.cpp");
    token_chips("parity_llama", chips_of(t.llama_context, llama_pieces, t.context_start, t.first_token), ImGui::GetFont());
    ui::text_dim("Hugging Face's tokenizers");
    token_chips("parity_hf", chips_of(t.hf_context, hf_pieces, t.context_start, t.first_token), ImGui::GetFont());
}

std::optional<uint64_t> TokenizerParityView::draw(PanelContext& ctx) {
    poll();
    draw_inputs(ctx);
    if (!m_result) return std::nullopt;
    ImGui::Separator();
    draw_summary(*m_result);
    const std::optional<uint64_t> clicked = draw_differences(m_result->check.parity);
    draw_text(*m_result);
    return clicked;
}

void TokenizerParityView::draw_windows() {
    if (!m_choosing) return;
    if (auto chosen = m_chooser.draw()) *m_choosing = *chosen;
    if (!m_chooser.is_open()) m_choosing = nullptr;
}

}  // namespace mlens
