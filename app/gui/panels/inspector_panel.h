// InspectorPanel (right): every field of the selected header, key, tensor or diagnostic, its
// byte ranges, and a hex view of its file opened at the bytes it points at (the whole file scrolls).
// The header starts with what people look for first: path, architecture, name and the rows of
// overview_rows (model_overview.h: context, embedding, layers, heads, vocabulary, chat template,
// Ollama-made and why), the same rows `mlens info` prints; the file's layout follows.
#pragma once

#include <cstdint>

#include "panels/panel.h"
#include "widgets/hex_view.h"

namespace mlens {

class InspectorPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;

private:
    void draw_bytes(PanelContext& ctx);

    // The selection the hex view was last opened at; it scrolls back there when this changes.
    Selection m_bytes_for;
    uint64_t m_bytes_doc = 0;
    HexViewState m_hex;
};

}  // namespace mlens
