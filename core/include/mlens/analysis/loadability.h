// Will it load: whether the linked llama.cpp loads a model, why not, and what to do — computed
// from the header alone (metadata, tensor infos, file size; no tensor byte is read) against the
// requirements generated from the pinned llama.cpp's sources (llama_requirements.h). The CLI
// (`mlens loads`, `check`, `info`, `store`) and the app all show this one answer.
//
// Contract of assess_loadability(model):
//  - A model that is not a GGUF (a safetensors file or folder, an Ollama tensor-blob model) does
//    not load: llama.cpp reads only GGUF. The reason names the config.json class and whether the
//    pinned convert_hf_to_gguf.py registers it (the fix: convert it with that script).
//  - A file named as a part of a split whose own keys say it is no split model (no split.count,
//    or one of at most 1) was read alone, as llama.cpp reads it (gguf_split.h): it is judged as
//    read, with a split_mismatch warning that the files beside it are not read.
//  - A split GGUF opened by a part other than its first does not load as given: llama.cpp loads
//    a split model from its first part only ("model must be loaded with the first split"); one
//    later_split_part reason whose fix names the first part. A split GGUF with parts missing does
//    not load: one missing_split_part reason per part that could not be read. The split keys of
//    the first part as llama.cpp's loader reads them (split_mismatch, its words), the first
//    problem the one reason, in its order: a split key of another type than split.count and
//    split.no UINT16, split.tensors.count INT32 ("key split.count has wrong type u32 but expected
//    type u16"); with split.count above 1, split.no absent ("key not found in model: split.no")
//    or not 0 ("illegal split file idx"), a first part not named "-00001-of-<split.count, 5
//    digits>.gguf" ("invalid split file name"); then the parts missing (above); then, every part
//    read, a later part whose own split.no is absent ("missing key split.no in GGUF split P"), not
//    UINT16 (llama.cpp's gguf_get_val_u16 asserts) or not its place ("invalid split file idx: N
//    (file: P), expected K"), a tensor name in two parts ("invalid model: tensor 'X' is duplicated"), and
//    split.tensors.count absent or other than the parts' tensors ("corrupted model: N tensors
//    expected but M found", N as the INT32 reads). Nothing else is checked after a split reason.
//    Parts joined by their names while the first part's split.count is absent or 1: llama.cpp
//    reads the first file alone, so that file alone is judged, with a split_mismatch warning
//    saying the other parts are not read.
//  - A GGUF whose header did not parse to its end (Model::partial) does not load: one
//    damaged_header reason with the reader's first error.
//  - A GGUF is checked the way llama.cpp's loader proceeds, each problem one reason:
//      names (gguf.cpp): a metadata key or a tensor name the file gives twice (duplicate_name,
//        llama.cpp's "duplicate key" / "duplicate tensor name"; the reader's E_DUPLICATE_KEY and
//        E_DUPLICATE_TENSOR): gguf_init fails on the first, keys before tensors, so the first is
//        the one reason and nothing after it is checked.
//      layout (gguf.cpp, per file in tensor-info order): a type id the linked ggml does not know
//        (unknown_type; nothing after it is checked in that file); a row not a multiple of the
//        block (bad_row_size); an offset other than the one the tensors before it give
//        (offset_mismatch, llama.cpp's "tensor 'X' has offset A, expected B"; its fix names the
//        block size that makes the previous tensor's bytes fit when one of 1..1024 with the same
//        block bytes does: a file quantized by a llama.cpp fork that reused the type id; only
//        the first mismatch of a file is reported, as llama.cpp stops there); tensor data past
//        the end of the file (data_out_of_bounds). A layout reason ends the check: gguf_init
//        fails, so llama.cpp's loader never runs (and no compat rewrite is tried).
//      architecture: general.architecture absent (no_architecture) or not a name of the linked
//        llama.cpp (unknown_architecture; the fix names the closest known name, nearest_name.h),
//        or a name it has no loader for (unsupported_architecture).
//      keys: a required key (llama_requirements.h) absent (missing_key; the fix says where the
//        value usually comes from in a Hugging Face config.json when we know it).
//      asserts: a load_hparams GGML_ASSERT the hyperparameters trip (llama_asserts.h), which
//        aborts the process (load_assert).
//      vocabulary (llama_vocab::impl::load, in its order): tokenizer.ggml.model absent
//        (missing_key), not a STRING ("wrong type ... but expected type str") or a name the
//        loader does not know ("unknown tokenizer", the names generated, llama_requirements.h);
//        a tokenizer whose branch needs merges without tokenizer.ggml.merges (unless its exempt
//        pre-tokenizer) or with merges other than an array of strings; no token list for any
//        tokenizer but "none" / "no_vocab"; a T5 (Unigram) charsmap stored other than as an
//        INT8/UINT8 array, which llama.cpp refuses with "invalid gguf type" (Ollama's writer,
//        which has no byte arrays, stored snowflake-arctic-embed2's as base64 strings). All
//        bad_vocabulary but the absent key. The charsmap rule is written by hand from
//        llama-vocab.cpp; the names and the merges rule are generated. Other vocabulary arrays'
//        types and lengths are not checked here: llama.cpp's dry run (dry_run.h) is the check
//        for those, and edits ask it (edit_write.h).
//      tensors: a required tensor absent (missing_tensor, llama.cpp's "tensor 'X' not found"), for
//        per-layer names every layer of block_count (minus nextn_predict_layers for `main`); a
//        tensor the loader never creates (extra_tensor: llama.cpp counts it and stops with "wrong
//        number of tensors"), decided only when the architecture's generated tensor list is
//        complete; a per-layer name whose layer is not below block_count is extra too; a tensor
//        the loader shapes with the vocabulary's token count last (llama_requirements.h
//        vocab_rows: token_embd, output, per_layer_token_embd, ...) whose last dimension is another
//        (wrong_shape, llama.cpp's "wrong shape"; the token count is the tokenizer.ggml.tokens
//        array's length, or <arch>.vocab_size without one; for a "none" / "no_vocab" tokenizer
//        <arch>.vocab_size or 0, as llama.cpp never reads its token list; other shapes are not
//        checked). Extra
//        tensors are one reason per leading name part ("v", "mm", "blk"), naming the first.
//        Conditional tensors and keys are never claimed missing (see llama_requirements.h).
//  - A conditional per-layer tensor (llama_requirements.h) is never a reason; when some layers of
//    the file have it and others do not, that is a warning (uneven_tensor, on the first layer
//    without it): llama.cpp's conditions are per model more often than per layer, so the file is
//    likely cut or mixed, but whether the loader asks for it there is not decided statically.
//  - Asserts that trip only at the first decode (norm epsilons, head counts, graph builders) do not
//    stop a load: they are `warnings` (same shape as reasons), never reasons.
//  - Verdict: loads when there is no reason. Otherwise, when the file is Ollama-made
//    (ollama_origin.h) and its layout has no reason, the text side of the compat plan is applied
//    (upstream_view) and the result checked the same way (layout aside: the export writes a new
//    one): with no reason left the verdict is loads_after_compat, the reasons are the file's own
//    and each fix names `mlens export-upstream`; otherwise does_not_load.
//  - Reasons keep that order; subject names the key or tensor (or the file), offset is the
//    absolute byte offset of the key or tensor info concerned when there is one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlens/model/model.h"
#include "mlens/result.h"

namespace mlens {

enum class LoadVerdict { loads, loads_after_compat, does_not_load };
const char* load_verdict_name(LoadVerdict v);  // "loads", "loads_after_compat", "does_not_load"

enum class LoadProblem {
    not_gguf,
    later_split_part,
    missing_split_part,
    split_mismatch,
    damaged_header,
    duplicate_name,
    unknown_type,
    bad_row_size,
    offset_mismatch,
    data_out_of_bounds,
    no_architecture,
    unknown_architecture,
    unsupported_architecture,
    missing_key,
    load_assert,
    bad_vocabulary,
    missing_tensor,
    wrong_shape,
    extra_tensor,
    decode_assert,
    uneven_tensor,
};
const char* load_problem_name(LoadProblem p);  // the enumerator's name

enum class LoadSubject { file, key, tensor };
const char* load_subject_name(LoadSubject s);  // "file", "key", "tensor"

struct LoadReason {
    LoadProblem problem = LoadProblem::not_gguf;
    LoadSubject subject = LoadSubject::file;
    std::string name;  // the key or tensor; empty for the file
    std::optional<uint64_t> offset;
    std::string text;  // what is wrong, in llama.cpp's words where it has them
    std::string fix;  // what to do; empty when nothing known fixes it
};

struct Loadability {
    LoadVerdict verdict = LoadVerdict::loads;
    std::vector<LoadReason> reasons;
    std::vector<LoadReason> warnings;
    // One line: "loads in llama.cpp 0.5.0", "loads only after the compat rewrite (mlens
    // export-upstream)", "does not load: <first reason>" (+ " (and N more)").
    std::string summary() const;
    // A table cell: "loads", "after compat" or "no: <first problem>" ("no: missing_key").
    std::string label() const;
};

Loadability assess_loadability(const Model& model);

// What the linked llama.cpp itself said when it loaded a file with no tensor memory (a dry run,
// dry_run.h): loaded, or its error's words.
struct DryRunLoad {
    bool loaded = false;
    std::string said;  // llama.cpp's error when it did not load; empty when it did
};
// Loads the GGUF at a path that way. Made by dry_run_checker() (dry_run.h) where llama.cpp's worker
// is linked; an error (no worker, cancelled) means no load could be tried.
using DryRunChecker = std::function<Result<DryRunLoad>(const std::string& path)>;

// {"verdict", "summary", "reasons": [{"problem", "subject", "name", "offset", "text", "fix"}],
// "warnings": [...]}; name, offset and fix are null when absent.
nlohmann::json loadability_json(const Loadability& l);
// The Loadability that loadability_json wrote (summary ignored: it follows from the rest);
// nullopt for anything else.
std::optional<Loadability> loadability_from_json(const nlohmann::json& j);

}  // namespace mlens
