// RecipePanel (center): how the model was quantized (analysis/quant_recipe.h) — a heat map of
// layers × tensor kinds, each cell the tensor's type shaded by its bits per weight (hover: the
// tensor), the tensors outside the layers, the provenance keys, and the llama-quantize command
// that reproduces the mix (copyable).
//
// Contract: the recipe is computed once per document, on the first draw (it reads only the
// tensor table and metadata, no tensor data). A click on a cell selects that tensor.
// Bits per weight are a quantity, not a verdict: cells use the neutral sequential ramp
// (theme.h sequential_color), deeper with more bits, at bpw_ramp_position — log2(bpw) / 5,
// so 1 bpw is the faintest and 32 (F32) the deepest — and a legend of the common widths shows
// the ramp. No red, amber or green: those mean error, warning and success everywhere else.
#pragma once

#include <optional>

#include "mlens/analysis/quant_recipe.h"
#include "panels/panel.h"

namespace mlens {

// Where `bpw` sits on the ramp, in [0, 1]: log2(bpw) / 5, clamped.
double bpw_ramp_position(double bpw);

class RecipePanel : public Panel {
public:
    void draw(PanelContext& ctx) override;

    // For tests: the recipe shown (after the first draw).
    const QuantRecipe* recipe() const { return m_recipe ? &*m_recipe : nullptr; }

private:
    void draw_heat_map(PanelContext& ctx);

    std::optional<QuantRecipe> m_recipe;
    std::string m_command;
    double m_min_bpw = 0, m_max_bpw = 0;
};

}  // namespace mlens
