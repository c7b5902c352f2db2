// The damaged store the verdict tests, the app tests and the screenshot share: next to O1's
// healthy tiny:latest, one model per way a model can be broken while its manifest and config
// are fine (so a list that reads only configs would call every one of them healthy).
#pragma once

#include <string>
#include <vector>

#include "ollama_store_builder.h"

namespace mlens::test {

struct BrokenModel {
    std::string name;  // display name, e.g. "missing:latest"
    std::string structure_code;  // the first error of the structure pass ("" when it passes)
    std::string verified_code;  // the first error once digests are verified
};

// Writes, under b.root(), tiny:latest and:
//  damaged-st:latest  a safetensors model of 9 tensor layers, 4 of whose blobs are not safetensors
//  png:latest         a PNG where the GGUF model blob should be
//  truncated:latest   a GGUF model blob cut after 100 bytes
//  mismatch:latest    a GGUF model blob changed after it was stored (its digest no longer matches)
//  missing:latest, fifo:latest, directory:latest, outside:latest
//                     the model blob absent, a FIFO, a directory, a symlink to a file outside the
//                     root (written in `outside_dir`)
// Returns every model but tiny with the codes the check gives it.
std::vector<BrokenModel> write_broken_store(OllamaStoreBuilder& b, const std::string& outside_dir);

// The layer names of damaged-st:latest, in manifest order, and which of them are damaged.
std::vector<std::string> damaged_st_tensor_names();
bool damaged_st_tensor_broken(size_t index);

}  // namespace mlens::test
