// The README.md of a store export: the source reference and digests, the files, what was
// rewritten or converted, and how to run the result. Written from the plan alone, so its size is
// known before anything is written; every text from the manifest is escaped for display.
#pragma once

#include <string>

#include "mlens/ollama/store_export.h"

namespace mlens {

std::string export_readme(const PreparedExport& prepared);

}  // namespace mlens
