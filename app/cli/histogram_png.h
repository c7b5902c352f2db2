// Histogram as a PNG picture for `mlens hist --png`: bars (linear or log10(1 + count) heights),
// axes, and labels for the range ends and the peak count. Drawn by a small rasterizer of filled
// rectangles (text from stb_easy_font's quads) and encoded with stb_image_write in memory (the
// file is written by the caller through the core's SafeFileWriter); nothing here is part of the
// core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/quant/stats.h"

namespace mlens::cli {

// The PNG file's bytes; empty when the encoder failed.
std::vector<uint8_t> histogram_png(const Histogram& h, const std::string& title, bool log_counts);

}  // namespace mlens::cli
