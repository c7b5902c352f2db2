// InferenceAbView (Inference › A/B): this document's model (A, the reference) against another
// open GGUF document (B) on one prompt with compare_ab — the summary (mean, median, p99 and max
// KLD, share of positions with the same top token, mean top-k overlap, first divergence), a bar
// chart of the KLD per position with the first diverging position marked, the tokens with their
// positions, and a table per position. Vocabularies that differ are reported as such.
//
// Contract: B can be any ready GGUF document of the workspace, this one included (a second
// session of the same file: a determinism check with KLD 0). Compare starts one job on the
// controller, which loads B in the job and drops it afterwards.
#pragma once

#include <cstdint>
#include <string>

#include "panels/panel.h"
#include "state/inference_controller.h"

namespace mlens {

class InferenceAbView {
public:
    InferenceAbView();
    void draw(PanelContext& ctx, InferenceController& c);
    bool run(PanelContext& ctx, InferenceController& c);
    // Chooses B when none is chosen: the first other ready GGUF document, else this one.
    void pick_default(PanelContext& ctx);
    // B as chosen here (the default when none is); the Corpus and Divergence views compare the same pair.
    Document* chosen_b(PanelContext& ctx);

    std::string prompt = "Once upon a time";
    AbOptions options;
    uint64_t b_document = 0;  // document id of B; 0: none chosen

private:
    void picker(PanelContext& ctx);
    void summary(const AbOp::Outcome& ab);
    void kld_chart(const AbOp::Outcome& ab, float height);
    void token_text(PanelContext& ctx, const AbOp::Outcome& ab, float height);
    void positions_table(PanelContext& ctx, const AbOp::Outcome& ab);
};

}  // namespace mlens
