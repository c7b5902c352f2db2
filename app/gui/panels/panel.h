// Panel: one view of a document. A new panel is one file pair in panels/ plus one line in
// panel_registry.cpp.
//
// Contract:
//  - The shell makes one instance per panel per document, so a panel keeps its own state
//    (filters, sort, scroll) for that document.
//  - draw() fills the region the shell gives it (a tab in the center, or the left/right pane);
//    it is only called for ready documents. draw_windows() draws any free-floating windows the
//    panel owns (value viewers) and is called every frame after the main layout.
//  - Panels talk to each other only through the Document: the selection, and links one panel posts
//    (Document::follow) for another. A link ("--select PREFIX:...", or a posted one) is offered to
//    every panel of the document (route_link); each that accepts it keeps what it names and acts
//    on it at its next draw, so the shell parses no panel's links and the Document holds no
//    panel's state. Several panels may take one link (the navigator highlights the metadata group
//    the Metadata panel filters by); the center one comes forward.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fonts.h"
#include "state/document.h"
#include "state/job_runner.h"

namespace mlens {

class Workspace;

struct PanelContext {
    Document& doc;
    JobRunner& jobs;
    const FontSet& fonts;
    Workspace* workspace = nullptr;  // every open document (compare views); null in bare tests
};

class Panel {
public:
    virtual ~Panel() = default;
    virtual void draw(PanelContext& ctx) = 0;
    virtual void draw_windows(PanelContext& ctx) {}
    // Extra text for the panel's tab title (e.g. a count); empty for none.
    virtual std::string badge(const Document& doc) const { return {}; }
    // Takes `link` when it names something this panel shows for `doc`; returns whether it did.
    virtual bool accept_link(std::string_view link, Document& doc) { return false; }
};

enum class PanelSlot { left, center, right };

struct PanelInfo {
    const char* id;  // stable: settings keys and --panel NAME
    const char* title;
    PanelSlot slot;
    std::unique_ptr<Panel> (*make)();
    // Whether the panel has anything for this document (null: every document); the shell leaves
    // it out of the tabs and panes otherwise.
    bool (*shows)(const Document&) = nullptr;
    // What the panel shows, one paragraph: Help → What each panel shows lists it.
    const char* description = "";
};

inline bool panel_shows(const PanelInfo& info, const Document& doc) { return !info.shows || info.shows(doc); }

// Every panel, in the order the View menu and the center tabs list them.
const std::vector<PanelInfo>& panel_registry();
const PanelInfo* find_panel(std::string_view id);
// Offers `link` to every panel of the document (one per registry entry, in its order) that shows
// it; the entry of the first center panel that accepts it, else of the first that does, or null.
const PanelInfo* route_link(std::string_view link, Document& doc, const std::vector<std::unique_ptr<Panel>>& panels);

template <typename T>
std::unique_ptr<Panel> make_panel() {
    return std::make_unique<T>();
}

}  // namespace mlens
