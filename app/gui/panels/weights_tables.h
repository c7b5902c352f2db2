// The tables of the Weights panel: statistics, comparison metrics, the first values, and the
// short statistics of one block-scale series.
#pragma once

#include <optional>

#include "fonts.h"
#include "mlens/analysis/weights_inspection.h"

namespace mlens {

// The statistics, then the route they took (stats.h) in one dim line, what it read in its tooltip.
void weights_stats_table(const TensorStats& s, std::optional<StatsRoute> route);
// count, zeros, min, max, mean, std in pairs (NaN and ±Inf only when there are any).
// `id` names the table.
void weights_brief_stats_table(const char* id, const TensorStats& s);
void weights_compare_table(const WeightsResult& r, const std::string& other_title);
// `shape` is the viewed tensor's ne (GGUF order); `rows_total` its row count.
void weights_values_table(const WeightsResult& r, uint64_t rows_total, const FontSet& fonts);

// "%.6g" of a double, "-" for NaN.
std::string number_text(double v);

}  // namespace mlens
