// Loading any model file for test inference, Ollama-made GGUFs included.
//
// Contract:
//  - load_model_session(path) opens `path` with our reader first (open_model: a store reference
//    or manifest becomes its GGUF blob, which is the file llama.cpp is given). A GGUF that is Ollama-made on
//    evidence (detect_ollama_origin, ollama_origin.h) and whose compat plan (plan_compat) has
//    text-side edits is exported with export_upstream (text side only) to a temporary directory
//    "mlens-load-<owner stamp>-XXXXXX" in the system temp folder (owner_stamp.h: the next load
//    removes one whose owner is gone, and so does the parent of a worker that died),
//    that file is loaded instead, and the temporary file is removed once llama.cpp has loaded it
//    (on Linux llama.cpp keeps its own mapping). `LoadRoute` says which way the file went, with a
//    banner for the UI ("Ollama-made GGUF: loaded through the upstream export (handle_gemma3);
//    evidence: ...", the first piece of evidence and how many more).
//  - A model our reader opens that is not a GGUF (a safetensors file or store model) is refused
//    with E_NOT_GGUF before llama.cpp sees it.
//  - Every other file — an upstream GGUF the shim's rules would still touch (the Llama-3 fix on
//    llama.cpp's own Llama-3 vocabulary, say), a path our reader cannot open, and any file when
//    SessionOptions::as_is is set — goes to llama.cpp as it is, so llama.cpp sees exactly the
//    file and its own error text reaches the caller unchanged.
//  - Progress: the job's fraction runs 0..1 over the export when there is one, then 0..1 over
//    the load. Cancel stops either step with E_CANCELLED and leaves no temporary file.
//  - An export failure is returned as that error (E_EXPORT_FOR_LOAD with the exporter's
//    message): the file cannot be loaded the way Ollama would load it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mlens/infer/session.h"
#include "mlens/model/model.h"
#include "mlens/result.h"

namespace mlens {

struct LoadRoute {
    bool through_export = false;
    std::vector<std::string> handlers;  // compat handlers whose edits were applied
    std::string banner;  // empty for a file loaded as it is
};

struct LoadedSession {
    std::unique_ptr<Session> session;
    LoadRoute route;
};

Result<LoadedSession> load_model_session(const std::string& path, const SessionOptions& options, JobContext* job = nullptr,
                                         std::shared_ptr<LogCapture> log = nullptr);

// The Model llama.cpp is handed for `model` by load_model_session without as_is, worked out
// without writing a byte: for a file load_model_session exports, the text side of its upstream
// export (export_layout) with every tensor in one file at the offset write_gguf gives it
// (data_offset counted from the start of the data section, which is all a span needs); nullopt
// when the file goes to llama.cpp as it is. An export the file cannot have is the exporter's error.
Result<std::optional<Model>> upstream_model_for_load(const Model& model);

}  // namespace mlens
