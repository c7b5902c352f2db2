// gguf-py (llama.cpp's Python GGUF package, in the pinned source) as a reference writer of
// big-endian GGUFs, run through /usr/bin/python3 with PYTHONPATH at its gguf-py folder.
#pragma once

#include <optional>
#include <string>

namespace mlens::test {

// Why gguf-py cannot run here (no python3, numpy or tqdm, which its scripts import), or nullopt.
std::optional<std::string> gguf_py_unavailable();

// Converts the little-endian GGUF at `path` to big-endian in place with gguf-py's endian
// converter (gguf-py/gguf/scripts/gguf_convert_endian.py, answering its YES prompt). Returns
// what it printed when it failed, or nullopt.
std::optional<std::string> gguf_py_convert_to_big_endian(const std::string& path);

// Rewrites the little-endian GGUF `in` (metadata general.architecture only, tensors of the types
// gguf-py's writer takes from numpy arrays: F32, F16, F64, I8, I16, I32, I64) as the big-endian
// GGUF `out` through gguf-py's writer, GGUFWriter(endianess=BIG). What it printed on failure.
std::optional<std::string> gguf_py_write_big_endian(const std::string& in, const std::string& out);

// Every tensor of the GGUF at `path` as gguf-py's GGUFReader reads it: a JSON object from tensor
// name to its values (F32 tensors, flattened in file order). nullopt when gguf-py failed; the
// message goes to `failure`.
std::optional<std::string> gguf_py_tensor_values(const std::string& path, std::string& failure);

}  // namespace mlens::test
