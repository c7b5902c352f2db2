// StoreExportWindow: the store panel's "Export…" window for one store model — what
// `mlens export` does, as jobs: the files the export will write (names, exact sizes, what each
// is) are planned and shown first, then written with progress and cancel, verified, and the
// result's verification and README.md shown.
//
// Contract:
//  - open() names the model and the formats that apply (store_export.h) and starts planning the
//    first; choosing another format or dtype plans again. Planning runs prepare_store_export on
//    the JobRunner (it opens the model), so the frame never waits.
//  - The output folder defaults to "<model>-<tag>-<format>" in the current directory; Export runs
//    write_store_export on the planned export (shared with the job, so closing the window or the
//    document meanwhile is safe). The output rules are the core's: OUT_DIR new or empty, outside
//    the store, nothing under it until everything was written and verified.
//  - After a success, "Open result" opens the folder (hf, mlx) or model.gguf (gguf) as a
//    document through the Workspace. Every text from the store is escaped before display.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlens/ollama/store_export.h"
#include "panels/panel.h"
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
    // Plans `format` (and for hf the dtype, nullopt: the model's default).
    void choose(PanelContext& ctx, ExportFormat format, std::optional<HfDtype> dtype = std::nullopt);
    void start_export(PanelContext& ctx);

private:
    void poll();
    void plan_view();
    void result_view(PanelContext& ctx);

    bool m_open = false;
    std::optional<Store> m_store;
    ModelName m_name;
    std::vector<ExportFormat> m_formats;
    ExportFormat m_format = ExportFormat::gguf;
    std::optional<HfDtype> m_dtype;
    std::string m_out_dir;
    JobHandle<PreparedExport> m_plan_job;
    JobHandle<StoreExportReport> m_export_job;
    // The finished planning, or why the model cannot be exported in that format.
    std::optional<Result<std::shared_ptr<PreparedExport>>> m_planning;
    std::shared_ptr<StoreExportOutcome> m_outcome;
    std::string m_readme;  // escaped README.md of the written export
};

}  // namespace mlens
