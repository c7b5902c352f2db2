// RecipePanel (center): how the model was quantized (analysis/quant_recipe.h) — a heat map of
// layers × tensor kinds, each cell the tensor's type coloured by its bits per weight (hover: the
// tensor), the tensors outside the layers, the provenance keys, and the llama-quantize command
// that reproduces the mix (copyable).
//
// Contract: the recipe is computed once per document, on the first draw (it reads only the
// tensor table and metadata, no tensor data). A click on a cell selects that tensor.
#pragma once

#include <optional>

#include "mlens/analysis/quant_recipe.h"
#include "panels/panel.h"

namespace mlens {

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
