// HealthPanel (center): for a registry's model, its blob digests first (registry_blobs_view.h);
// then the health pass of analysis/fsck.h over every tensor — NaN and Inf values,
// broken block scales, zero rows and columns, dead and duplicated experts, duplicated tensors and
// the readers' region problems — as a table of findings with their severity and exact location.
//
// Contract: the scan runs as one job on the JobRunner with progress and cancel; it starts the
// first time the panel is drawn for its document (fsck_model_cached: a report the cache database
// holds for the same unchanged files is taken from there) and again, reading every tensor and
// replacing the stored report, on "Scan again"; the report stays with
// the panel, which the shell keeps per document; its counts go to Document::value_scan for the
// status bar. The findings keep fsck's order: a truncation summary first with the tensors it cut
// under it, marked "└", by name. A click on a finding selects its bytes (the
// inspector's hex view shows the finding's offset: the value, block or scale concerned); its
// "Weights" button posts finding_weights_link: the Weights panel opens the tensor at the finding's
// expert (a stacked expert tensor), row and block. The link "health:verify-blobs" (kVerifyBlobsLink),
// taken for a registry's model only, starts its blob verification. The tab's badge counts the
// errors and warnings found and the blobs that failed their verification.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlens/analysis/fsck.h"
#include "mlens/analysis/fsck_json.h"
#include "panels/panel.h"
#include "panels/registry_blobs_view.h"

namespace mlens {

// "weights:TENSOR@expert=E#row=R,block=B" (panel_links.h) of a finding's first location; the
// parts it lacks left out. `tensor` is the name of Model::tensors[*f.tensor_index].
std::string finding_weights_link(const Finding& f, const std::string& tensor);

inline constexpr std::string_view kVerifyBlobsLink = "health:verify-blobs";

class HealthPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    bool accept_link(std::string_view link, Document& doc) override;
    std::string badge(const Document& doc) const override;

    // For tests: the report shown (null before the first scan finished) and whether a scan runs.
    const FsckReport* report() const { return m_report.get(); }
    bool running() const { return static_cast<bool>(m_job); }
    RegistryBlobsView& blobs() { return m_blobs; }

private:
    void start(PanelContext& ctx, CachedScan mode);
    void collect(Document& doc);
    void draw_table(PanelContext& ctx);

    RegistryBlobsView m_blobs;
    bool m_verify_linked = false;
    JobHandle<FsckReport> m_job;
    std::shared_ptr<const FsckReport> m_report;
    std::string m_status;  // how the last scan ended when it left no report
    double m_seconds = 0;
    double m_started = 0;
    bool m_started_once = false;
    bool m_show_errors = true, m_show_warnings = true, m_show_info = true;
    std::optional<size_t> m_selected;
};

}  // namespace mlens
