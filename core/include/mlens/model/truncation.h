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
//    that file), prefixed with the file's name when the model has several files. The readers'
//    per-tensor errors stay after it.
//  - Calling it again changes nothing.
//
// Contract of the cut as one finding (what `check`, `fsck` and the Health panel show):
//  - cut_tensors(model, file) lists the tensors of `file` that mark_missing_data marked (partial
//    or missing), by name in natural order (natural_order.h: blk.2 before blk.10).
//  - explained_by_truncation(model, d) is true for a reader's E_TENSOR_OUT_OF_BOUNDS about a file
//    that has an E_TRUNCATED_DATA summary: the summary and its list of cut tensors say it once, so
//    such rows are not listed again one by one (JSON keeps every diagnostic).
//  - cut_tensor_text(model, t) says how much of tensor t is there: "N of M bytes present" or
//    "no bytes present (data at X, the file ends at Y)".
#pragma once

#include <string>
#include <vector>

#include "mlens/model/model.h"

namespace mlens {

void mark_missing_data(Model& model);
std::vector<size_t> cut_tensors(const Model& model, uint32_t file);
bool explained_by_truncation(const Model& model, const Diagnostic& d);
std::string cut_tensor_text(const Model& model, size_t tensor);

}  // namespace mlens
