// RegistryBlobsView: at the top of the Health panel of a model opened from an Ollama registry
// (a document with Document::registry: opened from ollama://...), whether its blobs match their
// digests. A blob read by ranges is never whole, so the open hashed none: the view says so, and
// "Verify blobs" runs verify_registry_model (registry_verify.h) as a job with progress and
// cancel, fetching every blob whole, then shows the verdict line and one row per blob (kind,
// digest cut to 12 digits and whole on hover, size, verdict: for a mismatch the digest found, the
// whole message on hover; for another failure its message), the words and figures of
// `mlens verify ollama://...`. A failed run
// (the registry unreachable, the download limit) shows its error; the result stays with the view,
// which the panel keeps per document.
#pragma once

#include <memory>
#include <string>

#include "mlens/ollama/registry_verify.h"
#include "panels/panel.h"
#include "state/job_runner.h"

namespace mlens {

// The first three cells of a row about one blob, in the current table: its kind, its digest cut
// to 12 digits in the monospace font (whole on hover) and its size.
void blob_cells(LayerKind kind, const std::string& digest, uint64_t size, const FontSet& fonts);

class RegistryBlobsView {
public:
    // Whether `doc` is a registry's model, the documents the view draws for.
    static bool shows(const Document& doc);
    // Draws nothing for a document that is not a registry's model.
    void draw(PanelContext& ctx);

    // For tests: the last verification (null before one finished), whether one runs, and why the
    // last one left no result.
    const RegistryVerification* result() const { return m_result.get(); }
    bool running() const { return static_cast<bool>(m_job); }
    const std::string& status() const { return m_status; }
    // Blobs of the last verification that failed (the Health tab's badge counts them).
    size_t failed() const;
    // Starts a verification of the document's model, as the button does.
    void start(PanelContext& ctx);

private:
    void collect();
    void draw_table(PanelContext& ctx) const;

    JobHandle<RegistryVerification> m_job;
    std::shared_ptr<const RegistryVerification> m_result;
    std::string m_status;
};

}  // namespace mlens
