// write_edit: writes an EditPlan (edit_plan.h) as a new file, verified before it is placed.
//
// Contract:
//  - The output goes through SafeFileWriter and the model's OutputGuard (model_inputs.h): never
//    onto an input, never into an Ollama store the input lies in, a temporary file beside the
//    target renamed into place only after verification; nothing is left on any failure or cancel.
//  - Tensor data is never decoded or re-encoded: the data section is moved as a whole, by byte
//    ranges, from the input's data start to the output's (tensor types the linked ggml does not
//    know keep their bytes). Holes of a sparse input stay holes (only the extents SEEK_DATA finds
//    are copied; the file is then extended to its size). Data paths:
//      reflink          the plan fits in place (same data start): the whole file is cloned
//                       (ioctl FICLONERANGE), then the header region is written over;
//      copy_file_range  same data start but the filesystem cannot clone: the data extents are
//                       copied in the kernel at the same offsets, then the header is written;
//      stream           the data moves (or copy_file_range is refused): the header is written,
//                       then each data extent is read and written once, shifted, with progress.
//    WriteEditOptions::force_path (the CLI's test hook MLENS_EDIT_DATA_PATH=copy_file_range|stream)
//    skips the faster paths, so every path can be tested on any filesystem; forcing reflink is a
//    request like no forcing.
//  - Verification (EditVerification), on the temporary file before it is placed: it is re-opened
//    in its format (GGUF or safetensors) and has no error diagnostics; its keys are the planned ones (count, and each change
//    with its planned type and value); every tensor has the planned offset, and its bytes equal
//    the input's (compared byte for byte; a tensor of unknown size spans up to the next tensor or
//    the end of the file); fsck (analysis/fsck.h) runs on it. Findings about values (F_* codes)
//    are the input's too, since the bytes are the same: they are counted, not failed; a finding
//    of any other code (a region problem) fails. A failed verification is E_EDIT_VERIFY naming
//    the first problem, and nothing is placed.
//  - Cancellable through the JobContext (E_CANCELLED, nothing left behind). Progress covers the
//    data copy, the comparison and fsck.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/analysis/loadability.h"
#include "mlens/edit/edit_plan.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

enum class DataPath { reflink, copy_file_range, stream };
const char* data_path_name(DataPath p);  // "reflink", "copy_file_range", "stream"
std::optional<DataPath> data_path_from_name(std::string_view name);

struct WriteEditOptions {
    std::optional<DataPath> force_path;
    // What the output must not replace, when the caller has more inputs than the model's files
    // (the app: every open document); it must list the model's files too. Unset: the model's.
    std::optional<OutputGuard> guard;
    unsigned fsck_threads = 2;
    // llama.cpp's own load of the output (dry_run_checker(), dry_run.h); unset: the static verdict alone.
    DryRunChecker dry_run;
};

// What verification found. The loadability verdicts of the input and the output
// (loadability.h) are kept; an edit fails verification when the input loads in the linked
// llama.cpp (as it is or after the compat rewrite) and the output does not: a metadata edit
// that breaks loading is refused before it is placed. An input that did not load may stay so,
// or be fixed by the edit; either way the output's verdict is reported.
// With a dry-run checker, llama.cpp itself has the last word where the static verdict calls the
// input loadable as it is: the output (as it will be on disk) is loaded with no tensor memory,
// and when llama.cpp refuses it the input is loaded the same way; an output refused where the
// input loaded fails verification with llama.cpp's words, whatever the static verdict said.
// The static verdict checks what it names (loadability.h); the dry run catches the rest (a
// key's type, a tokenizer llama.cpp does not know, a tensor dimension it does not check).
// A part of a split model (named "-0000N-of-0000M.gguf") does not load alone: both verdicts are
// then the whole model's, loaded from its first part, with the other parts read from beside the
// input and the output standing in for the input's part (split_part). llama.cpp's dry run is not
// asked for a part: it finds the other parts by the loaded file's name, which a scratch or
// temporary copy does not have.
struct EditVerification {
    bool reopened = false;
    std::string reopen_problem;  // why the output did not read back cleanly, when it did not
    bool keys_as_planned = false;
    std::string key_problem;
    uint64_t tensors = 0;
    uint64_t tensors_equal = 0;
    std::vector<std::string> tensors_differing;  // names, at most kMaxListed
    bool fsck_ran = false;
    size_t fsck_errors = 0, fsck_warnings = 0;
    std::vector<std::string> fsck_region_findings;  // finding lines that fail verification
    std::optional<Loadability> input_loads, output_loads;  // GGUF only
    bool split_part = false;  // the verdicts are the whole split model's (above)
    std::optional<DryRunLoad> llama_output, llama_input;  // the dry runs made (input only when the output was refused)
    static constexpr size_t kMaxListed = 16;

    // The output's static verdict ("loads in llama.cpp 0.5.0 ..."), with what llama.cpp's dry run
    // said when it was asked (its words when it refused); "" for a file with none (safetensors).
    // For a split part: the whole model's verdict, then " (as a part of its split model)".
    std::string load_summary() const;
    // Runs the dry runs above when `check` is set and the input's static verdict is loads as it
    // is; `output_path` holds the output as it will be placed.
    void ask_llama(const DryRunChecker& check, const std::string& output_path, const std::string& input_path);

    bool passed() const;
    std::string first_problem() const;  // "" when passed
};

struct EditOutcome {
    std::string path;  // the file placed (or, in place, edited)
    uint64_t bytes = 0;
    DataPath data_path = DataPath::stream;
    uint64_t data_bytes_copied = 0;  // bytes of data extents copied (0 for reflink)
    EditVerification verification;
};

Result<EditOutcome> write_edit(const Model& model, const EditPlan& plan, const std::string& out, JobContext* job = nullptr,
                               const WriteEditOptions& options = {});

// The edited file read as its format's reader reads it (GGUF or safetensors).
Model read_edited(const EditPlan& plan, ByteSourcePtr source);

// The verification of `output` (an opened model) against the input and the plan, as above.
EditVerification verify_edit(const Model& input, const EditPlan& plan, const Model& output, JobContext* job = nullptr,
                             unsigned fsck_threads = 2);

}  // namespace mlens
