// InspectorPanel (right): every field of the selected header, key, tensor or diagnostic, its
// byte ranges, and a hex view of the first 256 bytes it points at in the file.
#pragma once

#include <cstdint>
#include <vector>

#include "panels/panel.h"

namespace mlens {

class InspectorPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;

private:
    void draw_bytes(PanelContext& ctx);

    // The bytes last read for the hex view, kept until the selection changes.
    Selection m_bytes_for;
    uint64_t m_bytes_doc = 0;
    std::vector<uint8_t> m_bytes;
};

}  // namespace mlens
