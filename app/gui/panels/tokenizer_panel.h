// TokenizerPanel (center): the vocabulary — id, piece with invisible characters made visible,
// type, score; a byte-level BPE vocabulary's pieces (byte_level_bpe.h) as the text they stand
// for, with the piece as stored in its own Stored column and tooltip — with search by text or id, the special token ids, and the chat template as
// read-only text (never rendered or executed). When fonts lack glyphs for some characters, the
// line saying so has a button that filters the table to the tokens using them. Clicking a token selects it for the inspector.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "panels/panel.h"
#include "state/array_search.h"

namespace mlens {

class TokenizerPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    // "token:ID": scrolls to and selects that token.
    bool accept_link(std::string_view link, Document& doc) override;

private:
    std::optional<uint64_t> m_linked_token;  // from a "token:ID" link, shown at the next draw
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
