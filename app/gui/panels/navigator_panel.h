// NavigatorPanel (left): the outline of a document — header facts, metadata groups by prefix,
// tensors by layer, the tokenizer, and diagnostics with warning/error counts. Clicking an entry
// selects it (header, diagnostic) or sets the matching center panel's filter and shows it.
#pragma once

#include "panels/panel.h"

namespace mlens {

class NavigatorPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
};

}  // namespace mlens
