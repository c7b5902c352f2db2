// Opens any supported model path, choosing the reader from the content, never from the name:
//  - a directory is a safetensors folder (open_safetensors_folder: an index and its shards, or
//    one weights file, plus the *.json beside them); one without weights is refused;
//  - a file starting with "GGUF" is read as GGUF (with its split siblings);
//  - a file that looks like safetensors (looks_like_safetensors: an 8-byte length, then '{'
//    after optional whitespace, or a length below 2^32) is read as safetensors, with the
//    quantized tensors and expert groups of an Ollama tensor blob described (tensor_blobs.h);
//  - a path that does not exist but parses as an Ollama model reference ("gemma3:4b",
//    "org/model:tag") opens that model from the first default store (find_stores: $OLLAMA_MODELS,
//    ~/.ollama/models, /usr/share/ollama/.ollama/models) whose manifest exists (open_store_model);
//    "STORE/reference" ("~/ollama-copy/gemma3:4b") opens it from the store at STORE instead: an
//    existing directory whose manifests hold the reference after it (split at the last '/' that
//    works, so the longest directory wins) — that form is tried before the default stores;
//    a file of that name always wins over the reference;
//  - anything else goes to the GGUF reader, which reports what it found (E_TRUNCATED, E_BAD_MAGIC).
#pragma once

#include <optional>
#include <string>

#include "mlens/formats/gguf_limits.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

// Fails only when the path cannot be opened; parse problems are diagnostics in the Model.
Result<Model> open_model(const std::string& path, JobContext* job = nullptr);

// The manifest file (<store root>/manifests/<host>/<namespace>/<model>/<tag>) of the model that
// `reference` names by the rule above, or nullopt when `reference` is an existing path or names
// no model of a default store.
std::optional<std::string> find_reference_manifest(const std::string& reference);

}  // namespace mlens
