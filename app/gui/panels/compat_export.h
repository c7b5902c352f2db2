// CompatExport: the Compat panel's "Export upstream GGUF" window — output paths, the export as a
// job with progress and cancel, then the ExportReport (files, bytes, tensors, data ops, notes) or
// the error, with "Open exported file" for each written file.
//
// Contract:
//  - open() fills the default paths from the document: <stem>.upstream.gguf and, when the plan
//    has a vision export, <stem>.mmproj.gguf, both in the input's folder (a document whose path is
//    not a .gguf file, such as a store model, gets the downloads folder: state/output_folder.h).
//    The mmproj path is shown and written only when has_vision_export() holds. Browse… picks
//    another folder for both files with the folder chooser; their names stay.
//  - The window fits the screen (write_job_row.h fit_next_window): its body scrolls and the
//    Export / Cancel / Close row stays visible.
//  - start() runs export_upstream on the JobRunner with the document's Model and the plan it was
//    given (shared, so the document may close meanwhile); one export at a time.
//  - Errors and paths are escaped before display. Opening a written file goes through the
//    Workspace like any other open.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "mlens/compat/upstream_export.h"
#include "panels/panel.h"
#include "widgets/file_chooser.h"
#include "widgets/write_job_row.h"

namespace mlens {

struct CompatView;

using ExportOutcome = Result<compat::ExportReport>;

class CompatExport {
public:
    void open(const Document& doc, const CompatView& view);
    // Starts the export with the current paths.
    void start(PanelContext& ctx, std::shared_ptr<const CompatView> view);
    void draw(PanelContext& ctx, const std::shared_ptr<const CompatView>& view);

    bool is_open() const { return m_open; }
    bool running() const { return static_cast<bool>(m_job); }
    const ExportOutcome* outcome() const { return m_outcome.get(); }
    const std::string& text_path() const { return m_text_path; }
    const std::string& mmproj_path() const { return m_mmproj_path; }
    // Output paths as typed in the window; an empty mmproj path writes no mmproj.
    void set_paths(std::string text, std::string mmproj) {
        m_text_path = std::move(text);
        m_mmproj_path = std::move(mmproj);
    }

private:
    void poll();
    void paths_view();
    void report_view(PanelContext& ctx);

    bool m_open = false;
    bool m_vision = false;
    bool m_write_mmproj = true;
    std::string m_text_path;
    std::string m_mmproj_path;
    FileChooser m_chooser;  // Browse…: the folder both files go in
    JobHandle<compat::ExportReport> m_job;
    std::shared_ptr<ExportOutcome> m_outcome;
};

}  // namespace mlens
