// Store panels (Ollama store documents):
//  - StoreModelsPanel (left): the models of the store with size, format and, for a rejected one,
//    the reason; selecting one posts the link "store-model:NAME" ("store-model:" for every model),
//    which both panels take (as they take the bare NAME --select gives); the StorePanel shows it.
//  - StorePanel (center): without a selected model, the model table (name, size, format, family,
//    parameters, quantization, modified, verdict with every reason; "not yet verified" until the
//    cache or the store's verification job knows the model's blobs) and the state of blobs/; with
//    one, its verdict and reasons, then its summary (store_summary_view.h: format, family,
//    parameters, quantization, capabilities, template and license heads), its tensor entries
//    (quant metadata, logical vs stored shapes, expert groups as group → expert → projection;
//    every tensor layer listed, the damaged ones marked), the config blob's fields, the text
//    layers as readable text, and last, closed, its layers grouped by media type (name, digest
//    cut to 12 digits with the whole one on hover, size, blob path or the layer's first error, a
//    verify button that hashes the blob as a job with progress). "Open model" opens it as a
//    document of its own (by its manifest path); "Export…" (a model the check accepts) opens the
//    export window with the formats that apply. The link "export:NAME" (--select) shows that
//    model and opens its export window, as the button does.
//
// Contract: every verdict shown is the listing's ModelCheck (store_check.h), the one `mlens
// check` gives; both panels advance the store's digest pass (store_document.h). The manifest view
// and the model's tensors load as one job per selected model (store_model_detail.h); nothing
// blocks the frame. Verification results are kept per digest for the life of the panel.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "panels/panel.h"
#include "panels/store_export_window.h"
#include "state/store_model_detail.h"

namespace mlens {

class StoreModelsPanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    std::string badge(const Document& doc) const override;
    bool accept_link(std::string_view link, Document& doc) override;

private:
    std::optional<size_t> m_model;  // the highlighted model, as the last link named it
};

class StorePanel : public Panel {
public:
    void draw(PanelContext& ctx) override;
    void draw_windows(PanelContext& ctx) override { m_export.draw(ctx); }
    bool accept_link(std::string_view link, Document& doc) override;

    // For tests.
    std::optional<size_t> shown_model() const { return m_model; }
    const StoreModelDetail* detail() const { return m_detail && *m_detail ? &(*m_detail)->value : nullptr; }
    bool loading() const { return static_cast<bool>(m_job); }
    // Starts verifying the blob of layer `layer` (-1: the config) of the shown model.
    void verify(PanelContext& ctx, int layer);
    // The outcome of a finished verification of `digest`, if any.
    std::optional<Status> verified(const std::string& digest);
    // Opens the Layers section (closed at first) on the next frame.
    void open_layers() { m_open_layers = true; }
    // The Export… window of the shown model (store_export_window.h).
    StoreExportWindow& export_window() { return m_export; }

private:
    struct Verification {
        JobHandle<Done> job;  // set until its outcome is taken
        std::optional<Status> outcome;
    };

    void models_table(Document& doc);
    void model_view(PanelContext& ctx, size_t index);
    void layers_table(PanelContext& ctx, const ManifestView& view, const ModelCheck& check);
    void layer_row(PanelContext& ctx, const LayerView& layer, int index, const ModelCheck& check);

    std::optional<size_t> m_model;  // the model to show (index into the listing); empty: all
    std::optional<size_t> m_loaded;  // model index of m_detail / the running job
    JobHandle<Partial<StoreModelDetail>> m_job;
    std::optional<Result<Partial<StoreModelDetail>>> m_detail;
    std::map<std::string, Verification> m_verify;
    bool m_open_layers = false;
    bool m_open_export = false;  // an "export:NAME" link: open the window when the model shows
    StoreExportWindow m_export;
};

}  // namespace mlens
