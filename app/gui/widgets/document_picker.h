// document_picker: the combo box of a two-document view that picks the other open document
// (state/paired_document.h) — every document that can pair with this one, by tab title.
//
// Contract: shows the picked document's title, or "no other model open"; choosing an entry
// picks it and returns true (false otherwise).
#pragma once

#include "panels/panel.h"
#include "state/paired_document.h"

namespace mlens::ui {

bool document_picker(const char* id, PanelContext& ctx, PairedDocument& pair, float width);

}  // namespace mlens::ui
