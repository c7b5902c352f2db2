// safetensors writer: writes a Model's tensors and string metadata as one safetensors file.
//
// Contract:
//  - Header: {"__metadata__":{...},"<tensor>":{"dtype":..,"shape":[..],"data_offsets":[b,e]},...}
//    with no whitespace, then spaces up to a multiple of 8 bytes from the file start (as the
//    reference writer pads). "__metadata__" holds the Model's STRING entries in Model order and
//    is left out when there are none; entries named "file:*" (the side files of a folder, see
//    safetensors_reader.h) and entries of other types have no place in it and are not written.
//    Tensors follow in Model order, their data packed in that order from offset 0.
//  - Strings are written as JSON with only '"', '\' and control characters escaped (\b \f \n \r
//    \t, else \u00XX), so reading a file this writer wrote and writing it again gives identical
//    bytes.
//  - A tensor's dtype is its StorageType name, which must be a safetensors dtype whose size
//    matches n_bytes (GGUF F32, F16, BF16, I8, I16, I32, I64 and F64 tensors qualify);
//    otherwise E_UNSUPPORTED_TYPE. The shape is ne reversed. Names and values must be valid
//    UTF-8 (E_INVALID_UTF8); tensor names must be unique and not "__metadata__", metadata keys
//    unique (E_DUPLICATE_KEY); the header must fit max_header_bytes (E_LIMIT).
//  - Tensor data is streamed from the Model's files in bounded chunks, never loaded whole,
//    through SafeFileWriter: nothing partial is left behind, and writing over one of the Model's
//    input files is refused (E_OUTPUT_IS_INPUT). Cancellable (E_CANCELLED).
#pragma once

#include <string>

#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

Status write_safetensors(const Model& model, const std::string& path, JobContext* job = nullptr);

// The header text (JSON and padding, without the 8-byte length) exactly as write_safetensors
// writes it.
Result<std::string> safetensors_header_text(const Model& model);

}  // namespace mlens
