// The importance matrix's llama-imatrix statistics (imatrix_statistics.h) as two tables: per
// tensor (layer, tensor, Σ(Act²), min, max, μ, σ, % active, N, entropy, E (norm), ZD, CosSim),
// sortable by any column and first in llama-imatrix's own order, and the weighted averages per
// layer. Figures are printed with llama-imatrix's digits.
#pragma once

#include <cstddef>
#include <vector>

#include "mlens/quant/imatrix_statistics.h"

namespace mlens {

class ImatrixStatisticsTable {
public:
    void draw(const ImatrixStatistics& statistics);

private:
    std::vector<size_t> m_order;  // tensor rows in display order
};

}  // namespace mlens
