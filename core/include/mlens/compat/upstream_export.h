// Export to upstream llama.cpp layout: applies a RewritePlan and writes what llama.cpp would load
// after Ollama's shim — the upstream-shaped text GGUF and, for vision architectures, the mmproj.
//
// Contract:
//  - The text file holds the text side's resulting metadata in resulting order and every tensor
//    not hidden by a skip prefix, in slot order, with its resulting name, type and shape.
//  - The mmproj file holds the clip side's resulting general.* and clip.* keys (the clip loader
//    reads nothing else; decision: the text model's KVs and tokenizer are left out) and the
//    tensors whose resulting names start with "v." or "mm.", plus "a." when the resulting
//    clip.has_audio_encoder is true (decision: nemotron's disabled audio is left out). A file
//    whose own architecture is "clip" keeps all its tensors.
//  - An mmproj is written only when asked for, and only for a model whose clip side ends as a
//    clip file (E_NO_VISION otherwise). A vision model exported without an mmproj path gets a
//    note in the report.
//  - Tensor bytes come from the data op planned for the slot (data_ops.h), or else from the first
//    nbytes(resulting type, resulting shape) of the slot's stored data; the stored tensor must
//    hold at least that many bytes (E_DATA_OP otherwise).
//  - Both outputs go through one OutputGuard (options.guard with the model's files added) and
//    SafeFileWriter (safe_file_writer.h), claimed before anything is written: never over one of
//    the input's files or inside the Ollama store it came from (E_OUTPUT_IS_INPUT, by
//    device and inode), never onto a device, FIFO, socket or folder (E_OUTPUT_NOT_REGULAR), and
//    text and mmproj never the same file, however the paths are spelled (E_OUTPUTS_SAME_FILE).
//  - Progress runs over the bytes of both files; cancel stops with E_CANCELLED and leaves nothing.
//  - Each file is re-read with our reader while it is still the temporary file and checked
//    against the layout (no error diagnostics; same key names in order; same tensor names,
//    types, shapes, sizes); a mismatch is E_EXPORT_CHECK and nothing is left. Only when every
//    file checked out are they renamed into place; when a rename fails (or another writer
//    replaced a file first: E_OUTPUT_REPLACED) the files already placed by this export are
//    removed again, never a file another writer placed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mlens/compat/rewrite_plan.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens::compat {

struct ExportOptions {
    std::string text_path;
    std::string mmproj_path;  // empty: no mmproj
    OutputGuard guard;  // more inputs to protect (the app's other open documents); the model's own are added
};

// What one side writes: the Model handed to write_gguf (metadata and tensor infos; tensor bytes
// via slots/ops) and where each tensor comes from.
struct ExportLayout {
    PlanSide side = PlanSide::text;
    Model model;
    std::vector<size_t> slots;  // per written tensor: slot in the input Model
    std::vector<std::optional<size_t>> ops;  // per written tensor: index into SidePlan::data_ops
};

struct ExportedFile {
    PlanSide side = PlanSide::text;
    std::string path;
    uint64_t bytes = 0;
    size_t metadata = 0;
    size_t tensors = 0;
    size_t data_ops = 0;  // tensors whose bytes a data op produced
};

struct ExportReport {
    std::vector<ExportedFile> files;
    std::vector<std::string> notes;
};

// True when the clip side ends as a clip (mmproj) file with vision tensors.
bool has_vision_export(const Model& model, const RewritePlan& plan);

Result<ExportLayout> export_layout(const Model& model, const SidePlan& plan);

Result<ExportReport> export_upstream(const Model& model, const RewritePlan& plan, const ExportOptions& options, JobContext* job = nullptr);

}  // namespace mlens::compat
