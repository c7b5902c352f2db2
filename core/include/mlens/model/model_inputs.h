// The files a Model was read from, as inputs that no output of an operation on it may replace.
//
// Contract: every SourceFile of the Model (each shard of a split GGUF or sharded safetensors,
// the blob of a store model) is added to the guard by device and inode, as it is now on disk.
// In-memory sources name no file and add nothing.
#pragma once

#include "mlens/io/safe_file_writer.h"
#include "mlens/model/model.h"

namespace mlens {

void add_model_inputs(OutputGuard& guard, const Model& model);
OutputGuard output_guard_for(const Model& model);

}  // namespace mlens
