// The loadability verdict (loadability.h) drawn alike in the Inspector, the status bar, the
// Diagnostics panel and the store's model table: green when llama.cpp loads the file, amber when
// it loads only after the compat rewrite, red when it does not.
#pragma once

#include <imgui.h>

#include "mlens/analysis/loadability.h"

namespace mlens::ui {

const ImVec4& load_verdict_color(LoadVerdict v);
// The summary line, coloured, wrapped to the available width.
void load_verdict_text(const Loadability& l);
// The short label ("loads", "after compat", "no: missing_key") in a table cell, the summary on hover.
void load_verdict_cell(const Loadability& l);
// Each reason and warning: its problem and subject, llama.cpp's words, and the fix when there is one.
void load_reasons(const Loadability& l);

}  // namespace mlens::ui
