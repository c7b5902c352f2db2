// Editing a GGUF header in place, and undoing it.
//
// Contract:
//  - edit_in_place writes an EditPlan into the file it was planned from, only when the plan fits in
//    place (same data start; otherwise E_IN_PLACE_NO_FIT saying how many bytes the header grows or
//    why the data would move). Refused before any byte is written: a file that cannot be opened for
//    writing (E_PERMISSION: a read-only filesystem, or a file with no write permission bit, which is
//    refused for root too), a file inside an Ollama store, or named as a store's blob
//    ("sha256-" and 64 hex digits, wherever it is: a blobs folder mounted elsewhere)
//    (E_OUTPUT_IN_STORE), a file with more than one name (E_HARD_LINKED: an edit in place would
//    change it under every name, a store blob linked out of its store among them), a file another
//    process is editing or undoing in place (E_BUSY: each holds an exclusive flock on the file
//    from its open to its end), a file whose header changed since it was planned (E_FILE_CHANGED:
//    every byte of the header is compared with what the plan was made from), an undo file already
//    beside it (E_OUTPUT_EXISTS: undo or remove it first; checked under the lock).
//  - Before writing, the edited file is verified as write_edit verifies an output (edit_write.h),
//    on the file as it will read with the new header laid over it; a failure is E_EDIT_VERIFY.
//    llama.cpp's dry run, when asked for, loads a sparse scratch copy of that file (the new header,
//    then a hole to the file's size) in the temporary folder ($TMPDIR, else /tmp), under a name of
//    its own made by mkstemp (".mlens-edit-check.gguf.tmp-<owner stamp>-XXXXXX": never a fixed
//    name, at which another user could plant a link or a folder), removed after (by the signal
//    handlers too; one left by a killed run is swept as a stale temporary, owner_stamp.h).
//  - Then, in order: the bytes of the header that change (the span from the first to the last
//    differing byte) are saved, old and new, in "FILE.mlens-undo" (written through SafeFileWriter,
//    so it exists whole or not at all); the span is written with one positioned write and flushed;
//    it is read back and compared. A process killed before the write leaves the old header, after
//    it the new one, with the undo file beside it in both cases. Bytes written: the span once, and
//    the undo file (twice the span and 96 bytes).
//  - A file replaced, renamed or removed at its path by another writer during the edit (the path
//    no longer names the open file) is E_OUTPUT_REPLACED, checked before the undo file is written
//    (nothing is written) and after the header is: the edit went to the file that was there. When
//    that file has no name left, its undo file is removed; when it lives on under another name
//    (renamed, or moved aside for a replacement), the undo file is kept, being the only copy of
//    its old bytes, and the message says so.
//  - undo_edit writes into the file as an edit in place does and is refused for the same files
//    before anything is read: inside an Ollama store or named as a blob (E_OUTPUT_IN_STORE), with
//    more than one name (E_HARD_LINKED), not writable (E_PERMISSION), being edited (E_BUSY).
//    It puts the saved bytes back when the undo file's checksum holds (else E_UNDO_MISMATCH:
//    damaged, nothing restored, the undo file kept), the file's size is the one recorded and every byte of
//    the span holds its old or its new value (a write cut short included), then removes the undo
//    file; a span already holding the old bytes is left alone (already_original). A span that is
//    not within the file's header as it reads now (the GGUF's data start), or whose old bytes are
//    not the magic where it covers it, was never written by an edit in place. Anything else is
//    E_UNDO_MISMATCH and nothing is written; no undo file is E_NOT_FOUND.
//  - The step hook runs after each step (tests stop or kill the process there).
//  Undo file layout (little-endian): "MLUNDO02", u64 file size, u64 span offset, u64 span length,
//  the SHA-256 in 64 lowercase hex digits of those 32 bytes followed by the old and the new bytes,
//  the old bytes, the new bytes. Any other magic (an earlier layout) is E_UNDO_MISMATCH.
#pragma once

#include <cstdint>
#include <string>

#include "mlens/edit/edit_plan.h"
#include "mlens/edit/edit_write.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

std::string undo_path_for(const std::string& path);  // path + ".mlens-undo"

enum class InPlaceStep { undo_saved, header_written };
const char* in_place_step_name(InPlaceStep step);  // "undo_saved", "header_written"
using InPlaceStepHook = void (*)(InPlaceStep step);
void set_in_place_step_hook(InPlaceStepHook hook);

struct InPlaceOutcome {
    std::string path;
    std::string undo_path;  // "" when the header already held every value: nothing written, no undo file
    uint64_t span_offset = 0;
    uint64_t span_bytes = 0;  // bytes of the header written
    EditVerification verification;
};

Result<InPlaceOutcome> edit_in_place(const Model& model, const EditPlan& plan, JobContext* job = nullptr, unsigned fsck_threads = 2,
                                      const DryRunChecker& dry_run = {});

struct UndoOutcome {
    std::string path;
    uint64_t span_offset = 0;
    uint64_t bytes_restored = 0;  // 0 when the span already held the old bytes
    bool already_original = false;
};

Result<UndoOutcome> undo_edit(const std::string& path);

}  // namespace mlens
