// CompatPanel (center, GGUF documents): what Ollama's llama.cpp compatibility shim would rewrite,
// side by side — the file as stored on the left, the upstream view on the right, the rule that
// made each change — for the text loader and the clip (mmproj) loader in two tabs, with the
// detection checks behind every decision, and "Export upstream GGUF…" (compat_export.h).
//
// Contract:
//  - The plan and its rows (compat_rows.h) are computed once per document as a job on the
//    JobRunner; the panel shows its progress with a cancel button, and a cancelled plan can be
//    started again.
//  - The header's verdict says "Ollama-made file" only on evidence (detect_ollama_origin,
//    ollama_origin.h), with the first piece below it (hover: each piece and why no upstream file
//    has it). A file the shim's rules would rewrite without such evidence says so: inference
//    loads it as it is.
//  - Each tab: a summary (handlers that fired, or the plan's summary saying what was checked for a
//    file no handler touches; the architecture before → after), the edit counts coloured by kind
//    (they double as the legend), then Metadata and Tensors sections in one column layout
//    (marker · as stored · type and value · upstream view · type and value · rule: the row's
//    operations and note, its handlers in the tooltip; names and operations are sized first; a key
//    copied from a stored key shows that key, dim, as stored) and the
//    collapsible detection checks, issues and skip prefixes. An empty clip side says so instead
//    of listing rows.
//  - Changed rows are tinted by their EditKind (colours chosen for the theme's background);
//    AMBIGUOUS notes are marked in the rule column. Unchanged rows are plain, their right side dim.
//  - "Only changes" (on by default when the plan changes anything) and the text filter (key or
//    tensor name on either side, rule and note; case-insensitive) apply to both tabs. Long lists
//    are drawn with ImGuiListClipper. Clicking a row selects the stored key or tensor in the
//    document.
//  - The link "compat:export" (--select) opens the export window once the plan is ready.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "panels/compat_export.h"
#include "panels/panel.h"
#include "state/compat_rows.h"

namespace mlens {

class CompatPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    void draw_windows(PanelContext& ctx) override;
    bool accept_link(std::string_view link, Document& doc) override;

    // For tests.
    const CompatView* view() const { return m_view.get(); }
    bool planning() const { return static_cast<bool>(m_job); }
    bool only_changes() const { return m_only_changes; }
    void set_only_changes(bool on) { m_only_changes = on; }
    void set_filter(std::string text) { m_filter = std::move(text); }
    // Rows listed after the filters: side 0 text / 1 clip, section 0 metadata / 1 tensors.
    size_t listed(int side, int section) const { return m_listed[side][section].size(); }
    CompatExport& exporter() { return m_export; }
    // What the "Export upstream GGUF…" button and the window's Export button do.
    void open_export(const Document& doc);
    void start_export(PanelContext& ctx) { m_export.start(ctx, m_view); }

private:
    void poll();
    void start(PanelContext& ctx);
    void refresh();
    void header(PanelContext& ctx);
    void side_view(PanelContext& ctx, int side);
    void rows_table(PanelContext& ctx, int side, int section);
    void checks_view(const compat::SidePlan& plan);

    JobHandle<CompatView> m_job;
    std::shared_ptr<const CompatView> m_view;
    bool m_cancelled = false;  // planning ended without a view: cancelled, or failed
    std::string m_failure;  // why planning failed (display-safe), empty when it was cancelled
    bool m_open_export = false;  // a "compat:export" link waits for the plan
    bool m_only_changes = true;
    std::string m_filter;
    // Filter state the listed rows were made for.
    bool m_listed_valid = false;
    bool m_listed_only_changes = true;
    std::string m_listed_filter;
    std::array<std::array<std::vector<size_t>, 2>, 2> m_listed;
    CompatExport m_export;
};

}  // namespace mlens
