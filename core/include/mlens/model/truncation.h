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
#pragma once

#include "mlens/model/model.h"

namespace mlens {

void mark_missing_data(Model& model);

}  // namespace mlens
