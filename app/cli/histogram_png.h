// Histogram as a PNG picture for `mlens hist --png`, 900 x 420: bars over [lo, hi] with axis
// titles ("value", "count" or "count (log scale)"), nice-number ticks on both axes (plot_axes.h),
// a log count axis labelled in decades (1, 10, 100, 1k, ...; a bin of count 1 keeps a sliver so
// it stays visible, an empty bin draws nothing), and — when values fall outside the range — two
// marked end bins for them, in their own colour, with their counts written above and a legend.
// The title (`mlens hist` passes "FILE · TENSOR · TYPE") and the range caption (the range line of
// its text: "range LO .. HI (mode auto, resolved full)") head the picture. Text is TrueType (png_canvas.h), in the face
// the app uses; encoded with stb_image_write in memory (the file is written by the caller through
// the core's SafeFileWriter).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/quant/stats.h"
#include "mlens/result.h"

namespace mlens::cli {

// The PNG file's bytes; E_NO_FONT without a font for the labels, E_ENCODE when the encoder failed.
Result<std::vector<uint8_t>> histogram_png(const Histogram& h, const std::string& title, const std::string& range_caption, bool log_counts);

}  // namespace mlens::cli
