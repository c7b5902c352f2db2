// MetadataPanel (center): every key with its type, count and value, in file order, filtered by
// text and by a group ("metadata:GROUP", panel_links.h; the navigator posts it). Arrays open in
// value viewer windows (double-click, or the link "metadata-array:ENTRY" the Inspector posts);
// right-click copies, or edits, renames or deletes the key; editing is MetadataEditor's
// (metadata_editor.h): staged edits, undo/redo and Save As….
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "panels/metadata_editor.h"
#include "panels/panel.h"
#include "widgets/array_viewer.h"

namespace mlens {

class MetadataPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    void draw_windows(PanelContext& ctx) override;
    bool accept_link(std::string_view link, Document& doc) override;

private:
    void refresh(const Document& doc);
    void open_viewer(const Document& doc, size_t entry);

    std::optional<size_t> m_group;  // index into DocumentIndex::metadata_groups; empty: all
    std::optional<size_t> m_linked_array;  // metadata entry whose viewer opens at the next draw
    std::string m_filter;
    std::string m_applied_filter;
    std::optional<size_t> m_applied_group;
    bool m_built = false;
    std::vector<size_t> m_rows;  // indices into Model::metadata
    float m_key_width = -1.0f;  // the widest key's text; measured once, the table then remembers
    std::vector<std::unique_ptr<ArrayViewer>> m_viewers;
    MetadataEditor m_editor;
};

}  // namespace mlens
