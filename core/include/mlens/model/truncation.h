// Tensor data missing from the end of a file (a cut download), said once.
//
// Contract of mark_missing_data(model):
//  - Only files whose header parsed completely count (SourceFile::data_start set): a file cut
//    inside its header has no tensor data to speak of, and its reader says where it ends.
//  - A tensor of such a file whose byte range ends past the file's size is marked
//    DataPresence::missing when it starts at or past the end, else partial; empty tensors and
//    tensors of unknown size stay complete.
//  - For each file with marked tensors, one error Diagnostic is placed before all others (files in
//    order): format as the model's, code E_TRUNCATED_DATA, field "data", offset = the file size X,
//    message "file ends at X of Y bytes: Z bytes of tensor data missing; K of N tensors affected"
//    (Y: the furthest tensor end; Z: the bytes of [X, Y) that some tensor claims; K, N: tensors of
//    that file), prefixed with the file's name when the model has several files. A GGUF file that
//    holds every byte its tensors need as ggml packs them (each tensor padded to the alignment,
//    in tensor-info order, from the data start; the last padding optional) is no cut file: its
//    header's offsets are wrong, and the message adds " (not a cut file: the P bytes its header
//    and tensors need, as ggml packs them, are all there; the header's offsets place tensors past
//    its end)". The
//    readers' per-tensor errors stay after it.
//  - Calling it again changes nothing.
//
// Contract of listed_diagnostics(model), the one order every list of a model's diagnostics takes
// (mlens check, mlens fsck and the Health panel through fsck.h, the Diagnostics panel):
//  - Each diagnostic once, in the model's order (a truncation summary first, as above), except a
//    reader's E_TENSOR_OUT_OF_BOUNDS row ("tensors[i]") about a tensor the E_TRUNCATED_DATA
//    summary of its file marked partial or missing: the summary says it once, so such rows are
//    left out (JSON output keeps every diagnostic). A row about a tensor the summary does not
//    cover (one of unknown size placed past the end) stays listed. Decision: safetensors' own
//    error that the data ends past the file (MetadataIncompleteBuffer) stays listed beside the
//    summary: it is the format's rule that the header's offsets cover the data exactly, a reader
//    error of its own, so a cut safetensors file counts two errors where a cut GGUF counts one.
//  - A truncation summary (field "data") carries `cut`: the tensors of its file that
//    mark_missing_data marked partial or missing, by name in natural order (natural_order.h:
//    blk.2 before blk.10).
// listed_error_count(model): the errors among listed_diagnostics, the one count of a model's
// errors that check and fsck say (a summary stands for the out-of-bounds rows it leaves out);
// listed_count(model) the diagnostics listed. Both without building the cut lists.
// cut_tensor_text(model, t) says how much of tensor t is there: "N of M bytes present" (N is 0
// when its data starts at or past the file's end).
// offsets_past_end(model, file): whether GGUF file `file` holds every byte its tensors need as
// ggml packs them (above), so that tensor data past its end comes of wrong offsets, not of a cut:
// the one answer the summary's "not a cut file" and every view's word for such data give.
#pragma once

#include <string>
#include <vector>

#include "mlens/model/model.h"

namespace mlens {

void mark_missing_data(Model& model);

struct ListedDiagnostic {
    size_t diagnostic = 0;  // into Model::diagnostics
    std::vector<size_t> cut;  // into Model::tensors: the tensors a truncation summary stands for
};

std::vector<ListedDiagnostic> listed_diagnostics(const Model& model);
size_t listed_error_count(const Model& model);
size_t listed_count(const Model& model);
std::string cut_tensor_text(const Model& model, size_t tensor);
bool offsets_past_end(const Model& model, uint32_t file);

}  // namespace mlens
