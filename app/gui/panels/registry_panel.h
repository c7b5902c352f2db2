// RegistryPanel (center): for a model opened from an Ollama registry (ollama://...), what
// `mlens show ollama://...` prints, read where the model lives: the manifest's URL and digest,
// the summary `ollama show` leads with, the config, the text layers (template, system, params,
// messages, license) and the layers by media type (kind, digest cut to 12 digits and whole on
// hover, size). The manifest, config and text blobs were fetched with the document's open, from
// the manifest its model was opened from (Document::registry, view_registry_model in
// registry_view.h): the panel asks the registry for nothing. The summary's parameters and
// capabilities come from the document's model. Blob digests are verified in the Health panel
// (registry_blobs_view.h).
#pragma once

#include "mlens/ollama/manifest_view.h"
#include "panels/panel.h"

namespace mlens {

class RegistryPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;

private:
    void layers_table(const ManifestView& v, PanelContext& ctx) const;
};

}  // namespace mlens
