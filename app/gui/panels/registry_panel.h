// RegistryPanel (center): for a model opened from an Ollama registry (ollama://...), what
// `mlens show ollama://...` prints, read where the model lives: the manifest's URL and digest,
// the summary `ollama show` leads with, the config, the text layers (template, system, params,
// messages, license) and the layers by media type (kind, digest cut to 12 digits and whole on
// hover, size). The manifest, config and text blobs are fetched by a job (view_registry_model,
// registry_view.h) the first time the panel is drawn for its document, with progress and cancel;
// the summary's parameters and capabilities come from the document's model, already open. A
// fetch that fails shows its error and a button to try again. Blob digests are verified in the
// Health panel (registry_blobs_view.h).
#pragma once

#include <memory>
#include <string>

#include "mlens/ollama/manifest_view.h"
#include "panels/panel.h"
#include "state/job_runner.h"

namespace mlens {

class RegistryPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;

    // For tests: the view fetched (null before it arrived) and why the last fetch failed.
    const ManifestView* view() const { return m_view.get(); }
    const std::string& status() const { return m_status; }

private:
    void start(PanelContext& ctx);
    void layers_table(PanelContext& ctx) const;

    JobHandle<ManifestView> m_job;
    std::shared_ptr<const ManifestView> m_view;
    std::string m_status;
    bool m_started = false;
};

}  // namespace mlens
