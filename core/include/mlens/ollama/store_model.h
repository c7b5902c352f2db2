// Opening a model of a store by reference ("gemma3:4b", "org/model:tag") as one Model.
//
// Contract:
//  - The manifest is read and validated (store.h, manifest.h); if it is missing, unreadable or
//    invalid the call fails with its first error. Blobs are resolved with find_blob's checks
//    before anything is opened; nothing is hashed (verify with blob_hash.h or check_store).
//  - GGUF models: the last model layer (as Ollama's GetModel) is read by the GGUF reader as file 0.
//  - safetensors models (tensor layers): every distinct tensor blob, in manifest order, is read
//    by the safetensors reader as one file of the Model (files[i].path = the blob's path), and
//    describe_tensor_blobs (tensor_blobs.h) adds quantized views and expert groups using each
//    blob's layer name. Each blob's __metadata__ entries keep their keys and their file index.
//    HF JSON layers follow as files with STRING entries "file:<layer name>" holding their text
//    (as the safetensors folder reader does), at most kMaxJsonBlobBytes each, lazy when long.
//    The bits hint for ambiguous shapes comes from config.json's quantization /
//    quantization_config "bits" (also under text_config).
//  - A blob that cannot be resolved or opened is an error diagnostic (format "store", field
//    "layers[i]") and the Model is partial; a blob whose size differs from its layer's is
//    E_SIZE_MISMATCH. The rest still opens. A model or tensor blob that cannot be resolved or
//    opened keeps its file slot with no source and its file name (sha256-<hex>) as path, so that
//    Model::missing_files counts it and views say "in the N of M files present". Every diagnostic from resolving or reading a layer's
//    blob ends with the layer, its media type and digest: "... (layers[0]:
//    application/vnd.ollama.image.model sha256:<hex>)".
//  - Every other layer (config, params, projector, adapter, text layers, a second model layer) is
//    judged by the store check's structure pass (store_check.h) and its findings join the
//    diagnostics, fields under the manifest or blob path: the Model's errors are the check's.
//  - E_NO_MODEL_LAYER when the manifest has neither model nor tensor layers.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mlens/job.h"
#include "mlens/model/model.h"
#include "mlens/ollama/model_name.h"
#include "mlens/ollama/store.h"

namespace mlens {

Result<Model> open_store_model(const Store& store, const ModelName& name, JobContext* job = nullptr);

// How the layers of a manifest are opened: a store's blobs, or a registry's (registry_model.h).
// A layer that cannot be opened gets its error diagnostic in `model` (fail_layer) and nullopt.
using LayerOpener = std::function<std::optional<ByteSourcePtr>(Model& model, const ManifestLayer& layer)>;

// The Model of a manifest's layers as open_store_model reads them (the GGUF model layer, or the
// tensor blobs and JSON layers), each blob opened by `open_blob`; `read` gets the layers read.
// `shown` names the model in errors.
Result<Model> open_manifest_model(const std::string& shown, const Manifest& manifest, const LayerOpener& open_blob,
                                  std::vector<const ManifestLayer*>& read, JobContext* job = nullptr);

// Records that `layer` could not be opened: an error diagnostic (format "store", field the
// layer's) with e's code and message, and the Model partial.
void fail_layer(Model& model, const ManifestLayer& layer, const Error& e);

}  // namespace mlens
