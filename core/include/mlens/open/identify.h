// What one file's bytes say it is, before any reader runs: GGUF, safetensors, or not a model file.
//
// Contract (the content decides, never the file name):
//  - A file starting with the magic "GGUF" is GGUF, however short: the GGUF reader reports where
//    it ends (E_TRUNCATED version, ...).
//  - A file of at least 8 bytes that looks_like_safetensors (safetensors_reader.h) is safetensors.
//  - Everything else fails with E_NOT_A_MODEL (field "", offset 0), whose message says what the
//    file is instead:
//      "empty file (0 bytes)";
//      "N bytes: too short for a GGUF (24-byte header) or safetensors (8-byte length)" below 8 bytes;
//      "legacy GGML/GGMF/GGJT/GGLA model file, not supported (N bytes): magic 67 67 6A 74" for the
//      formats before GGUF;
//      "not a model file: N bytes, starts with \"root:x:0:0:root:\"…" otherwise — at most the first
//      16 bytes, escaped for display (escape.h), with "…" when the file is longer.
//  - A read error is E_IO.
#pragma once

#include "mlens/io/byte_source.h"
#include "mlens/model/model.h"
#include "mlens/result.h"

namespace mlens {

// Format::gguf or Format::safetensors, or the E_NOT_A_MODEL / E_IO error described above.
Result<Format> identify_file(const ByteSource& source);

}  // namespace mlens
