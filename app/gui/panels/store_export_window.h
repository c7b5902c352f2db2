// StoreExportWindow: the store panel's "Export…" window for one store model — what
// `mlens export` does, as jobs: the files the export will write (names, exact sizes, what each
// is, and the README.md it will write, as text) are planned and shown first, then written with
// progress and cancel, verified, and the result's verification shown.
//
// Contract:
//  - open() names the model and the formats that apply (store_export.h) and starts planning the
//    first; choosing another format or dtype plans again. Planning runs prepare_store_export on
//    the JobRunner (it opens the model), so the frame never waits.
//  - The output folder defaults to "<model>-<tag>-<format>" in the downloads folder
//    (state/output_folder.h: never in the store, never the working directory). Browse… picks the
//    folder it goes in with the folder chooser; the name stays, and choosing another format renames
//    it in the folder picked. Export runs write_store_export on the planned export (shared with the
//    job, so closing the window or the document meanwhile is safe). The output rules are the
//    core's: OUT_DIR new or empty, outside the store, nothing under it until everything was
//    written and verified.
//  - The window fits the screen it is on (at most the work area less a margin, 1366×768
//    included): its body scrolls, and the row of Export / Cancel / Close stays at the bottom.
//    README.md is shown as the text it is (readable_text.h: real line breaks; only control
//    characters and invalid bytes escaped).
//  - After a success, "Open result" opens the folder (hf, mlx) or model.gguf (gguf) as a
//    document through the Workspace. Every text from the store is escaped before display.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlens/ollama/store_export.h"
#include "panels/panel.h"
#include "widgets/file_chooser.h"
#include "widgets/write_job_row.h"

namespace mlens {

using StoreExportOutcome = Result<StoreExportReport>;

class StoreExportWindow {
public:
    void open(PanelContext& ctx, const Store& store, const ModelName& name, std::vector<ExportFormat> formats);
    void draw(PanelContext& ctx);

    bool is_open() const { return m_open; }
    bool busy() const { return m_plan_job || m_export_job; }
    // The planned export, once planning finished without error.
    const PreparedExport* prepared() const { return m_planning && *m_planning ? m_planning->value().get() : nullptr; }
    const StoreExportOutcome* outcome() const { return m_outcome.get(); }
    const std::string& out_dir() const { return m_out_dir; }
    void set_out_dir(std::string dir) { m_out_dir = std::move(dir); }
    // The README.md the planned export writes, as shown ("" before planning finished).
    const std::string& readme() const { return m_readme; }
    // Plans `format` (and for hf the dtype, nullopt: the model's default).
    void choose(PanelContext& ctx, ExportFormat format, std::optional<HfDtype> dtype = std::nullopt);
    void start_export(PanelContext& ctx);

private:
    void poll();
    void options_row(PanelContext& ctx);
    void plan_view();
    void readme_view();
    void result_view(PanelContext& ctx);

    bool m_open = false;
    std::optional<Store> m_store;
    ModelName m_name;
    std::vector<ExportFormat> m_formats;
    ExportFormat m_format = ExportFormat::gguf;
    std::optional<HfDtype> m_dtype;
    std::string m_out_dir;
    std::string m_parent;  // the folder m_out_dir is in: the default, or what Browse… picked
    FileChooser m_chooser;
    JobHandle<PreparedExport> m_plan_job;
    JobHandle<StoreExportReport> m_export_job;
    // The finished planning, or why the model cannot be exported in that format.
    std::optional<Result<std::shared_ptr<PreparedExport>>> m_planning;
    std::shared_ptr<StoreExportOutcome> m_outcome;
    std::string m_readme;  // README.md of the planned export, as readable text
};

}  // namespace mlens
