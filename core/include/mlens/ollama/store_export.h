// Exporting a model of an Ollama store into a folder other tools load: the plan (which formats
// apply, the exact files each writes, with names and sizes, before anything is written) and the
// write, verified before the folder appears under its final name.
//
// Contract:
//  - Formats: a GGUF-backed model (model layers) exports as "gguf"; a tensor-blob model (tensor
//    layers) as "hf" (the default) and "mlx". store_export_formats says which apply to a manifest.
//  - prepare_store_export opens the model (store_model.h), refuses one with errors, and plans:
//    gguf: model.gguf — the upstream-shaped GGUF of the compat export (compat/upstream_export.h)
//      when the blob is Ollama-made on evidence (compat/ollama_origin.h), else the blob as is;
//      mmproj.gguf — the projector layer's blob, else the compat clip side when the model has a
//      vision part; adapter-N.gguf for the adapter layers (N from 1, manifest order); draft.gguf
//      for a draft layer; Modelfile (modelfile.h) and README.md. A text layer longer than
//      kMaxTextBlobBytes cannot go into the Modelfile whole, and a value no Modelfile can carry
//      unchanged (write_modelfile) is refused: both E_EXPORT.
//    hf: every JSON layer under its name (config.json, tokenizer.json, draft/config.json, ...; a
//      name that is absolute, has "..", is empty or is one of the files written here is left
//      out with a note), the tensors in model-0000N-of-0000M.safetensors shards (always the
//      sharded names, even for one shard; decision: one naming whatever the size) of at most
//      kHfShardBytes each (a tensor larger than that gets a shard of its own) with
//      model.safetensors.index.json, and README.md. Tensors are hf_export.h's.
//    mlx: as hf, with the tensors of mlx_export.h and config.json rewritten with its quantization.
//    Sizes are exact: text files are planned with their content, GGUF files from the header the
//    writer will write, shards from their header text.
//  - write_store_export writes into a scratch folder ".<name>.part-<owner stamp>-XXXXXX"
//    (owner_stamp.h) beside OUT_DIR, every
//    file through SafeFileWriter, verifies it there (blob copies byte for byte against the blob,
//    compat files by the compat export's own re-read, hf tensors by re-opening the folder with the
//    safetensors folder reader: values bit-equal to ModelLens's dequantization rounded to the
//    dtype, copies — every MLX tensor but the dequantized ones — byte-equal), and only then renames the folder to OUT_DIR. OUT_DIR must
//    not exist or be an empty folder (E_OUTPUT_EXISTS otherwise), may not end in "." or ".."
//    (E_ARGS before anything is written: no rename can place a folder there), its parent must exist, and it
//    may not lie inside the store (E_OUTPUT_IN_STORE: any folder above it is the store root by
//    device and inode, OutputGuard::check_folder). On any error, verification failure
//    (E_EXPORT_CHECK) or cancel (E_CANCELLED) the scratch folder is removed and nothing is left;
//    SIGINT/SIGTERM/SIGHUP remove it too; one left by a SIGKILL is removed by the next export
//    into the same parent folder.
//  - Progress runs over the bytes of all files. Memory stays bounded: data moves in chunks of
//    at most a few MiB; no file or tensor is held whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/compat/rewrite_plan.h"
#include "mlens/job.h"
#include "mlens/model/model.h"
#include "mlens/ollama/hf_export.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/ollama/store.h"

namespace mlens {

enum class ExportFormat { gguf, hf, mlx };
const char* export_format_name(ExportFormat format);  // "gguf", "hf", "mlx"
std::optional<ExportFormat> parse_export_format(std::string_view text);

// The formats that apply to a model whose manifest this is: gguf with a model layer; hf and mlx
// with tensor layers; none otherwise.
std::vector<ExportFormat> store_export_formats(const Manifest& manifest);
// The same from a listing's model format (manifest_view.h model_format): "gguf" gives gguf,
// "safetensors" hf and mlx, anything else none.
std::vector<ExportFormat> export_formats_of(std::string_view model_format);

struct StoreExportOptions {
    std::optional<ExportFormat> format;  // default: the first of store_export_formats
    std::optional<HfDtype> dtype;  // hf: default from config.json, else bf16
    uint64_t shard_limit = kHfShardBytes;  // hf: tensor bytes per shard
};

enum class ExportFileKind { blob_copy, upstream_text, upstream_mmproj, text, safetensors_shard };

// What each kind of file is, in one table: its name in JSON ("blob", "compat_text",
// "compat_mmproj", "text", "safetensors"), whether the compat export writes it (text and clip side
// together, each checked by that export's own re-read), and whether it is checked by reading it
// back against its source (blob copies against their digest, text byte for byte). Shards are
// checked by the safetensors verification of the whole folder.
struct ExportFileKindFacts {
    ExportFileKind kind;
    const char* name;
    bool written_by_compat_export;
    bool read_back;
};
const ExportFileKindFacts& export_file_kind(ExportFileKind kind);

struct ExportFile {
    std::string name;  // relative to OUT_DIR
    uint64_t bytes = 0;  // exact size of the file written
    ExportFileKind kind = ExportFileKind::text;
    std::string description;  // what it is, one line
    std::string blob_path;  // blob_copy: the blob
    std::string digest;  // blob_copy: the layer's digest
    std::string text;  // text: the content
    size_t shard = 0;  // safetensors_shard: index into StoreExportPlan::hf.shards
};

struct StoreExportPlan {
    std::string reference;  // the model as named: "tiny-llama:q4_0"
    ExportFormat format = ExportFormat::gguf;
    std::vector<ExportFormat> formats;  // every format that applies
    std::vector<ExportFile> files;  // in writing order
    std::vector<std::string> notes;  // what was rewritten, left out, decided
    bool ollama_made = false;  // gguf: the model blob is Ollama-made
    HfPlan hf;  // hf, mlx: shards and tensors
    uint64_t total_bytes() const;
};

struct PreparedExport {
    Store store;
    ModelName name;
    ManifestView view;
    Model model;
    compat::RewritePlan compat_plan;  // gguf
    StoreExportPlan plan;
};

Result<PreparedExport> prepare_store_export(const Store& store, const ModelName& name, const StoreExportOptions& options,
                                            JobContext* job = nullptr);

struct StoreExportReport {
    std::string out_dir;
    std::vector<ExportFile> files;  // as written (sizes checked against the plan)
    HfVerification verification;  // hf
    size_t files_verified = 0;
};

Result<StoreExportReport> write_store_export(const PreparedExport& prepared, const std::string& out_dir, JobContext* job = nullptr);

}  // namespace mlens
