// TokenizerPanel (center): the vocabulary — id, piece with invisible characters made visible,
// type, score; a byte-level BPE vocabulary's pieces (byte_level_bpe.h) as the text they stand
// for, with the piece as stored in its own Stored column and tooltip — with search by text or id, the special token ids, and the chat template as
// read-only text (never rendered or executed). When fonts lack glyphs for some characters, the
// line saying so has a button that filters the table to the tokens using them. Clicking a token selects it for the inspector.
// The Parity tab compares the vocabulary with a Hugging Face tokenizer.json (tokenizer_parity_view.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "panels/panel.h"
#include "panels/tokenizer_parity_view.h"
#include "state/array_search.h"

namespace mlens {

class TokenizerPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    void draw_windows(PanelContext& ctx) override;
    // "token:ID": scrolls to and selects that token. "parity:TOKENIZER_JSON" or
    // "parity:TOKENIZER_JSON::TEXT_FILE": opens the Parity tab and compares with that file.
    bool accept_link(std::string_view link, Document& doc) override;

private:
    std::optional<uint64_t> m_linked_token;  // from a "token:ID" link, shown at the next draw
    std::optional<std::pair<std::string, std::string>> m_linked_parity;  // tokenizer.json, text file
    bool m_select_vocabulary = false, m_select_parity = false;
    TokenizerParityView m_parity;
    void draw_summary(Document& doc);
    void draw_vocabulary(PanelContext& ctx);
    void draw_template(PanelContext& ctx);

    std::string m_query;
    ArraySearch m_search;
    std::optional<uint64_t> m_scroll_to;
    std::string m_template;  // escaped for display, built once
    bool m_template_built = false;
};

}  // namespace mlens
