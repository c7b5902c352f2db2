// GGUF writer: writes a Model as a GGUF v3 file, little-endian (as llama.cpp reads) or big-endian.
//
// Contract:
//  - The version written is 3, or 2 when the Model was read from a v2 file (the layouts are
//    identical, so a v2 file round-trips unchanged); v1 input is written as v3. Tensor data comes
//    in ggml's little-endian layout (Model::read_tensor_bytes, or the provider), so a big-endian
//    input written little-endian holds the same values.
//  - Big-endian output (GgufByteOrder::big) reverses every multi-byte header number (the magic
//    stays "GGUF") and each tensor's multi-byte block fields as gguf_byte_order.h defines them:
//    the bytes gguf-py's endian converter makes of the little-endian file. A tensor of a type
//    with no big-endian layout refuses the whole write (E_BIG_ENDIAN_TYPE) before any byte.
//  - Keys in Model order with their GGUF types; arrays are streamed from their ArrayIndex (raw
//    byte copy when the source layout matches v3 little-endian); tensor infos in Model order with
//    offsets recomputed in the canonical packed layout (each tensor's data padded to the
//    alignment, like ggml's writer; a Model without tensors read from an unpadded file stays
//    unpadded, as gguf-py writes vocab-only files), so reading a llama.cpp-written file and writing it back
//    gives identical bytes. The alignment is general.alignment if present, else 32.
//  - Tensor data is streamed from each tensor's source in bounded chunks (or from a
//    TensorDataProvider), never loaded whole.
//  - write_gguf writes through SafeFileWriter (safe_file_writer.h): a temporary file beside the
//    target, renamed into place only after a complete, flushed write; nothing is left on any
//    failure; the Model's own input files and non-regular files are never written over
//    (E_OUTPUT_IS_INPUT, E_OUTPUT_NOT_REGULAR). write_gguf_into writes the same bytes into an
//    open writer and leaves verifying and committing to the caller.
//  - Cancellable through the JobContext (E_CANCELLED, nothing left behind).
#pragma once

#include <functional>
#include <string>

#include "mlens/io/safe_file_writer.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

// Supplies the bytes of tensor `index` when they do not come from the Model's files (data
// operations, generated weights). Writes exactly `length` bytes starting at `offset` to dst.
using TensorDataProvider = std::function<Status(size_t index, uint64_t offset, uint64_t length, void* dst)>;

enum class GgufByteOrder { little, big };

Status write_gguf(const Model& model, const std::string& path, JobContext* job = nullptr, const TensorDataProvider& provider = nullptr,
                  GgufByteOrder order = GgufByteOrder::little);
Status write_gguf_into(SafeFileWriter& out, const Model& model, JobContext* job = nullptr, const TensorDataProvider& provider = nullptr,
                       GgufByteOrder order = GgufByteOrder::little);

// Each tensor's offset from the start of the data section as write_gguf lays the data out
// (canonical packed order, padded to the model's alignment). E_UNKNOWN_SIZE for a tensor of
// unknown size, E_SIZE_OVERFLOW when the sum overflows.
Result<std::vector<uint64_t>> gguf_data_offsets(const Model& model);

// The header bytes (everything before the tensor data) exactly as write_gguf would write them.
Result<std::vector<uint8_t>> gguf_header_bytes(const Model& model, GgufByteOrder order = GgufByteOrder::little);

// One metadata value as a GGUF v3 little-endian KV entry holds it after its key: the type id, then
// the value (arrays: element type, count, elements), as gguf_header_bytes writes it.
Result<std::vector<uint8_t>> gguf_value_bytes(const Value& value);

}  // namespace mlens
