// safetensors reader: a file (u64 little-endian header length N, N bytes of JSON header, tensor
// data) or a folder of them, into a Model.
//
// Contract (malformed-inputs.md is normative; the safetensors rows of A3 are implemented here):
//  - N is checked against max_header_bytes and the file size before anything is read or sized
//    from it. The header is parsed by parse_strict_json (UTF-8, surrounding whitespace, depth,
//    duplicate keys anywhere, canonical integers), then against the header schema
//    (safetensors_header.h) and the size and layout rules (safetensors_layout.h). What the
//    reference implementation (the `safetensors` crate) accepts is accepted, a tensor entry given
//    as the array [dtype, shape, data_offsets] included (serde reads a struct from either form);
//    what it accepts and is refused here: a key given twice (it keeps the last) and a shape of
//    more than max_rank dimensions (E_LIMIT).
//  - Codes are the reference implementation's error names where it has one: HeaderTooSmall,
//    InvalidHeaderLength and HeaderTooLarge (field "header", offset 0), InvalidHeader (not UTF-8),
//    InvalidHeaderStart (not an object), InvalidHeaderDeserialization (JSON syntax or schema),
//    InvalidOffset, ValidationOverflow, MisalignedSlice, TensorInvalidInfo,
//    MetadataIncompleteBuffer (field "data"); besides them E_DUPLICATE_KEY, E_LIMIT (naming the
//    cap), E_IO and E_CANCELLED. Offsets are absolute: 8 + the position in the header for
//    anything in the JSON, the data position for coverage. Warnings: W_LEADING_WHITESPACE (the
//    header should begin with '{'), W_UNKNOWN_FIELD (a field other than dtype, shape,
//    data_offsets in a tensor entry).
//  - A damaged file still opens: `partial` is set, the first error is a diagnostic, and every
//    __metadata__ entry and tensor entry that parsed completely is kept (sized when its size is
//    computable; n_bytes is unknown when it overflows or is not whole bytes).
//  - Model mapping: format safetensors. __metadata__ string values are STRING entries in header
//    order (key_range and value_range: the JSON string tokens, quotes included; type_range: empty,
//    at the value). Tensors keep the header's order; type is safetensors_storage_type(dtype);
//    ne is the shape reversed into GGUF order (ne[0] varies fastest; shape_row_major gives the
//    file's order back); relative_offset is data_offsets[0]; data_offset = 8 + N +
//    data_offsets[0]; info_range spans the entry from its key to its closing brace. The
//    SourceFile has data_start = header_bytes = 8 + N, alignment 1 (the format has none).
//  - Folders: open_safetensors_folder reads model.safetensors.index.json if present, else
//    model.safetensors, else the folder's only *.safetensors.index.json, else its only
//    *.safetensors. An index's weight_map values name the shards. Each must be a plain file name
//    (no '/', '\', NUL, "." or ".."; E_SHARD_NAME otherwise), so no path from the index ever
//    leaves the folder; symlinks inside the folder are followed (Hugging Face cache snapshots
//    consist of them). Shards are files 0..k-1 in name order; the Model's tensors are every
//    shard's in that order; its metadata is the first shard's __metadata__ (the others' are not
//    merged). A shard that cannot be opened is E_SHARD_MISSING; a tensor in two shards
//    E_DUPLICATE_TENSOR; a weight_map that disagrees with the shards W_INDEX_MISMATCH. Index
//    JSON errors are E_INDEX_JSON, schema errors E_INDEX_SCHEMA (weight_map must be an object of
//    strings), with offsets in the index file.
//  - Decision: the folder's *.json files (config.json, tokenizer_config.json, the index, ...)
//    belong to the model the user opened, so each becomes a SourceFile after the shards and a
//    STRING metadata entry "file:<name>" holding its text, with the whole file as value_range.
//    They are shown, not interpreted, with one exception: an MLX quantized folder (config.json
//    "quantization", mlx_quantized_folder.h) gives each quantized module's P.weight the logical
//    view of an Ollama tensor blob (TensorInfo::quant; P.scales and P.biases its companions), so
//    it lists, decodes and compares as one quantized tensor. At most max_side_files files of at most
//    max_side_file_bytes each are kept (W_SIDE_FILE_SKIPPED for the rest, and for a *.json entry
//    that cannot be read: a FIFO, a folder, a dangling symlink, an unreadable file); texts longer
//    than Value::kInlineStringBytes stay lazy.
#pragma once

#include <string>
#include <vector>

#include "mlens/formats/safetensors_limits.h"
#include "mlens/io/byte_source.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

// Content detection: at least 8 bytes, and either the header begins (after optional JSON
// whitespace) with '{' or the length's upper four bytes are zero. Valid headers are far below
// 2^32 bytes, while GGUF and the other magics put non-zero bytes there.
bool looks_like_safetensors(const ByteSource& source);

// Parses one safetensors source as file `file_index` of `model`, appending metadata, tensors and
// diagnostics. Returns false when an error was found (the Model is then partial).
bool read_safetensors_into(Model& model, ByteSourcePtr source, uint32_t file_index, const SafetensorsLimits& limits = {},
                           JobContext* job = nullptr);

Model read_safetensors(ByteSourcePtr source, const SafetensorsLimits& limits = {}, JobContext* job = nullptr);

// Opens one safetensors file. Fails only when the path cannot be opened as a regular file.
Result<Model> open_safetensors(const std::string& path, const SafetensorsLimits& limits = {}, JobContext* job = nullptr);

// Opens a folder (see the contract). Fails when it cannot be listed or holds no weights to open
// (E_NOT_REGULAR_FILE: a directory is not a model file unless it holds safetensors weights).
Result<Model> open_safetensors_folder(const std::string& dir, const SafetensorsLimits& limits = {}, JobContext* job = nullptr);
// The index at an http(s):// URL (remote/source_opener.h) and its shards at the URLs beside it,
// read as open_safetensors_folder reads a folder that holds only that index and its shards: a
// server lists nothing, so no side file (config.json, ...) is read. The folder reader opens every
// file through open_source, so the same code serves both.
Result<Model> open_safetensors_index(const std::string& index_url, const SafetensorsLimits& limits = {}, JobContext* job = nullptr);

// The shape in the order safetensors writes it (slowest-varying first): ne reversed.
std::vector<uint64_t> shape_row_major(const TensorInfo& t);

}  // namespace mlens
