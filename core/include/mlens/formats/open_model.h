// Opens any supported model path, choosing the reader from the content, never from the name:
// a file starting with "GGUF" is read as GGUF; anything else is handed to the GGUF reader too,
// which reports what it found (E_BAD_MAGIC) — other formats register here as they are added.
#pragma once

#include <string>

#include "mlens/formats/gguf_limits.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

// Fails only when the path cannot be opened; parse problems are diagnostics in the Model.
Result<Model> open_model(const std::string& path, JobContext* job = nullptr);

}  // namespace mlens
