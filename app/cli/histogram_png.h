// Histogram as a PNG picture for `mlens hist --png`: bars (linear or log10(1 + count) heights),
// axes, and labels for the range ends and the peak count. Drawn by a small rasterizer of filled
// rectangles (text from stb_easy_font's quads) and written with stb_image_write; nothing here is
// part of the core.
#pragma once

#include <string>

#include "mlens/quant/stats.h"

namespace mlens::cli {

// Returns an empty string on success, else why the file could not be written.
std::string write_histogram_png(const Histogram& h, const std::string& title, bool log_counts, const std::string& path);

}  // namespace mlens::cli
