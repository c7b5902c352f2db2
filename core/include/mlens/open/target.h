// The one way in: what a path or model reference names, and opening it as a Model. Every command
// and view resolves its input here, so the same text gets the same answer everywhere.
//
// Contract of resolve(text), in this order:
//  - An existing directory is a store root when is_store_root (store.h: it holds manifests/);
//    else a safetensors folder when it holds a *.safetensors or *.safetensors.index.json regular
//    file; else not a model (E_NOT_A_MODEL, naming a lone blobs/ when there is one).
//  - An existing regular file at <root>/manifests/<host>/<namespace>/<model>/<tag> whose root is a
//    store root and whose parts form a valid ModelName is that store model, addressed by its
//    manifest (how recent files and drag and drop name store models).
//  - Any other existing path is opened once (open_file: regular files only, never blocking) and
//    identified by content (identify.h): an importance matrix of llama-imatrix (GGUF or legacy
//    .dat, looks_like_imatrix in imatrix.h) is `imatrix`; a model file (GGUF or safetensors) keeps
//    that open source for open_target; anything else is not a model, with the reason
//    (E_NOT_A_MODEL, E_NOT_REGULAR_FILE, E_IO), keeping the source when the file opened.
//  - A path that does not exist and parses as an Ollama model reference names a store model:
//    "STORE/reference" ("~/ollama-copy/gemma3:4b") in the store root STORE first (split at the
//    last '/' that works, so the longest store path wins), then "reference" in the default stores
//    (find_stores) in order; a store has the model when its manifest file exists (lstat, nothing
//    is read). Otherwise the target is missing (E_NOT_FOUND, saying where the reference was
//    looked up when the text is one); when a store it was looked up in has other tags of the
//    model ("STORE/gemma3" with no gemma3:latest), the error names that store and lists the tags,
//    and the missing target keeps that store.
//  - A path that does not exist and is a remote reference (remote/remote_url.h: http://, https://,
//    hf://) is opened on its server (remote/remote_source.h: its first bytes fetched, the rest
//    read by range as it is needed) and identified by content like a local file: a model file
//    keeps that source, with `path` the URL as shown (display_url: no query, no credential). A
//    server that cannot be reached or refuses the file makes the target missing (404, 410) or not
//    a model (any other failure), with the HTTP or network error as the reason. A URL of a
//    *.safetensors.index.json is a safetensors folder whose `path` is that URL: open_target reads
//    it with open_safetensors_index (the index and its shards beside it). An ollama://
//    reference is a registry model (ollama/registry_model.h) when it parses; nothing is fetched
//    before open_target asks the registry for its manifest, opens its blobs like a store
//    model's and fetches its config and text layers (registry_view.h), whose errors join the
//    model's diagnostics as a store model's store check does.
//  - A file always wins over a reference of the same text.
// open_target opens what resolve found, reading each file once: a model file or a GGUF imatrix
// (a GGUF like any other: its keys and tensors) from its source
// (GGUF with its split siblings; a safetensors file with the quantized tensors and expert groups
// of an Ollama tensor blob described, tensor_blobs.h), a folder with open_safetensors_folder, a store model with
// open_store_model. A store root is not one model (E_STORE_ROOT), nor a legacy imatrix
// (E_NOT_A_MODEL, naming `mlens imatrix`); missing and not-a-model targets
// fail with their reason. Parse problems are diagnostics in the Model, and tensor data past the
// end of a file is summarized (truncation.h); a read the transport refused (is_transport_code:
// the download limit, the network, an HTTP error, a remote file that changed or ignores ranges)
// fails the open with that error, since it says nothing of the file.
#pragma once

#include <optional>
#include <string>

#include "mlens/io/byte_source.h"
#include "mlens/job.h"
#include "mlens/model/model.h"
#include "mlens/ollama/model_name.h"
#include "mlens/ollama/store.h"

namespace mlens {

struct RegistryManifest;  // ollama/registry_model.h
struct RegistryReference;  // ollama/registry_model.h
struct ManifestView;  // ollama/manifest_view.h

enum class TargetKind { model_file, safetensors_folder, store_root, store_model, imatrix, missing, not_a_model, registry_model };

struct Target {
    TargetKind kind = TargetKind::missing;
    std::string text;  // as given
    std::string path;  // the file, folder or store root; a store model's manifest file
    Format format = Format::unknown;  // model_file, imatrix: what its content is (unknown: legacy .dat)
    ByteSourcePtr source;  // model_file, imatrix, and a not_a_model file that opened: the file, opened once
    std::optional<Store> store;  // store_root, store_model; missing: the store with other tags of the model
    ModelName name;  // store_model, registry_model
    std::string registry;  // registry_model: the registry's base URL (ollama/registry_model.h)
    Error problem;  // missing, not_a_model: why
};

// "GGUF file", "safetensors file", "safetensors folder", "Ollama store", "Ollama model",
// "imatrix file", "missing", "not a model", "Ollama registry model".
const char* target_kind_name(const Target& target);

// How a GGUF file named as one part of a split model ("<stem>-0000N-of-0000M.gguf") opens:
// joined with its sibling parts as one model (what every reading command shows), or alone (what
// an edit changes: that file's own header and tensors).
enum class SplitParts { joined, alone };

Target resolve(const std::string& text);
Result<Model> open_target(const Target& target, JobContext* job = nullptr, SplitParts parts = SplitParts::joined);
// The registry model `reference` names (TargetKind::registry_model) opened as open_target opens it, from its manifest
// already fetched (fetch_registry_manifest) and its view (view_registry_model, whose config and
// text layer errors lead the model's diagnostics, view_findings): the registry is not asked for
// either again. After the view met a transport failure (view_transport_failure), the open
// fails with it and asks for no blob.
Result<Model> open_fetched_registry_model(const RegistryReference& reference, const RegistryManifest& registry,
                                          const ManifestView& view, JobContext* job = nullptr);
bool is_transport_code(ErrorCode code);
// open_target(resolve(text), job).
Result<Model> open_model(const std::string& text, JobContext* job = nullptr);

}  // namespace mlens
