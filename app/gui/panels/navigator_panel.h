// NavigatorPanel (left): the outline of a document — header facts, metadata groups by prefix,
// tensors by layer, the tokenizer, and diagnostics with warning/error counts. Clicking an entry
// selects it (header, diagnostic), or posts the link that filters the matching center panel
// ("metadata:GROUP", "tensor-layer:N", panel_links.h) and shows it.
//
// Contract: the navigator takes those links too, from itself or anyone (a panel's chip that
// clears its filter, --select), and highlights the group and layer they last named.
#pragma once

#include <cstddef>
#include <optional>

#include "panels/panel.h"

namespace mlens {

class NavigatorPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    bool accept_link(std::string_view link, Document& doc) override;

private:
    void metadata_section(Document& doc);
    void tensor_section(Document& doc);

    std::optional<size_t> m_metadata_group;  // index into DocumentIndex::metadata_groups
    std::optional<size_t> m_tensor_layer;  // index into DocumentIndex::layers
};

}  // namespace mlens
