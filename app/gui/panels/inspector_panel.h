// InspectorPanel (right): every field of the selected header, key, tensor or diagnostic, its
// byte ranges, and a hex view of its file opened at the bytes it points at (the whole file scrolls).
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
