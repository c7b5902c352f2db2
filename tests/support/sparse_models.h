// Sparse model files: a GGUF or safetensors header that claims tensors of any size (up to
// terabytes), written as a real header followed by a hole the file system fills with zeros, so a
// test can read a "1 TiB" tensor from a file that occupies a few KB. Chosen bytes can be written
// into the hole afterwards (patch_file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mlens::test {

struct SparseTensor {
    std::string name;
    uint32_t ggml_type;  // GGUF: a ggml type id
    std::vector<uint64_t> ne;  // GGUF order
};

// Writes a GGUF (llama architecture, no tokenizer) whose tensors follow each other, 32-byte
// aligned, in a hole. Returns the absolute offset of each tensor's data, or an empty vector when
// the file could not be written.
std::vector<uint64_t> write_sparse_gguf(const std::string& path, const std::vector<SparseTensor>& tensors);

// Writes a safetensors file of one tensor `name` of `dtype` and `shape` (slowest first), whose
// data of `data_bytes` bytes is a hole. Returns the absolute offset of the data, or 0 on failure.
uint64_t write_sparse_safetensors(const std::string& path, const std::string& name, const std::string& dtype,
                                  const std::vector<uint64_t>& shape, uint64_t data_bytes);

// Writes `bytes` at `offset` of an existing file; false on failure.
bool patch_file(const std::string& path, uint64_t offset, const std::vector<uint8_t>& bytes);

}  // namespace mlens::test
