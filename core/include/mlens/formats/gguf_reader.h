// GGUF reader: versions 1-3, little- and big-endian, into a Model.
//
// Contract (malformed-inputs.md is normative; the GGUF rows of A3 are implemented here):
//  - Every count, length, dim and offset is bounded by the bytes remaining and by GgufLimits
//    before any allocation or loop; arithmetic is checked; nothing recurses on input. n_kv and
//    n_tensors are rejected (E_COUNT) when they exceed by more than one item what the bytes
//    after the preamble can hold (14 bytes per KV, 25 per tensor info), so a file cut inside
//    the last item it declares is reported as a truncation of that item's field.
//  - Format errors become error Diagnostics with code, field path and absolute offset; parsing
//    stops at the first fatal one and `partial` is set, keeping every KV and tensor parsed
//    completely before it. Recoverable oddities become warnings and parsing goes on.
//  - Big-endian files (version reads as 0x03000000) are read byte-swapped, with W_BIG_ENDIAN;
//    each tensor of a type with no defined big-endian layout (gguf_byte_order.h) is an error
//    E_BIG_ENDIAN_TYPE at its type field (the file stays open; its values cannot be read).
//    GGUF v1 uses 32-bit counts and string lengths (W_GGUF_V1).
//  - Arrays are indexed, not materialized; strings longer than Value::kInlineStringBytes stay
//    lazy.
//  - Decision: a STRING array of a file (not a remote or in-memory source) estimated to hold more
//    than 1 MiB past its first 256 KiB is scanned in two parts at once, the second on a thread of
//    the pool of parallel.h; the offsets and diagnostics are exactly those of a scan on one thread
//    (gguf_string_split.h).
//  - Tensor types ggml does not know keep the file open (W_UNKNOWN_TENSOR_TYPE), except the
//    absurd ids >= 0x80000000 which are rejected (E_TENSOR_TYPE).
//  - Decision: tensor data bounds and overlaps are checked at open; a layout that is valid but
//    not the canonical packed order is a warning (W_NONCANONICAL_LAYOUT), as llama.cpp refuses it.
//  - Split models: open_gguf on a file named "<stem>-0000N-of-0000M.gguf" opens all M shards
//    (paths derived from the opened file's own name only, never from metadata) as one Model
//    whose metadata is shard 1's and whose tensors are all shards' in order, unless the opened
//    file's own keys say it is no split model: it is then read alone (gguf_split.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mlens/formats/gguf_limits.h"
#include "mlens/io/byte_source.h"
#include "mlens/job.h"
#include "mlens/model/model.h"

namespace mlens {

// True for the four magic bytes of the formats before GGUF (GGML, GGMF, GGJT, GGLA, either byte
// order), which the reader refuses as "legacy format not supported".
bool is_legacy_ggml_magic(std::string_view magic);

// Parses one GGUF byte source as file `file_index` of `model` (appending metadata, tensors and
// diagnostics). Returns false when parsing stopped on a fatal error.
bool read_gguf_into(Model& model, ByteSourcePtr source, uint32_t file_index, const GgufLimits& limits = {}, JobContext* job = nullptr);

// Reads one GGUF source as a whole Model.
Model read_gguf(ByteSourcePtr source, const GgufLimits& limits = {}, JobContext* job = nullptr);

// Reads an opened GGUF file with its sibling shards when its name (source->path()) says it is split.
Model read_gguf_with_siblings(ByteSourcePtr source, const GgufLimits& limits = {}, JobContext* job = nullptr);

// The split model a part belongs to, as llama.cpp loads it from its first part: `part` read in
// place of the file at `part_path`, the other parts read from beside part_path, opened_file 0.
// nullopt when part_path is not named as a part of a split model ("-0000N-of-0000M.gguf"), or
// when `part` is read alone (its keys say it is no split model, gguf_split.h).
std::optional<Model> read_split_model_with_part(ByteSourcePtr part, const std::string& part_path, const GgufLimits& limits = {},
                                                JobContext* job = nullptr);

// Opens a GGUF path and reads it with read_gguf_with_siblings. Fails only when the path cannot be
// opened as a regular file; parse problems are diagnostics in the Model.
Result<Model> open_gguf(const std::string& path, const GgufLimits& limits = {}, JobContext* job = nullptr);

}  // namespace mlens
