// A tiny llama checkpoint in Hugging Face naming (safetensors) and its GGUF conversion, for tests
// of name alignment: 2 heads of 4 rows and 1 KV head (Q and K rows permuted as llama.cpp's
// converter does), a norm, two per-expert HF tensors stacked into one GGUF tensor, and one HF
// tensor the conversion has no counterpart for (model.layers.0.mlp.extra.weight). Every value
// of a paired tensor is equal after the converter's transform.
#pragma once

#include <string>

namespace mlens::test {

struct HfConversionFiles {
    std::string gguf;  // conv.gguf, architecture llama
    std::string safetensors;  // hf.safetensors
};

// Writes both files into `dir`.
HfConversionFiles write_hf_conversion(const std::string& dir);

}  // namespace mlens::test
