// Ollama-format demo GGUFs (written by make_demo_models into OUT_DIR): small files laid out the
// way Ollama's legacy converter wrote them (spec ollama-compat.md §2), so the Compat view and the
// upstream export have real rewrites to show on both the text and the clip side.
//  - ollama-gemma3.gguf: gemma3 text (2 blocks, n_embd 64) with the SigLIP vision tower (v.*) and
//    the projector (mm.*) in the same file; no rope / rms-eps KVs and no chat template, context
//    length 131072, four image tokens past the embedding rows in the tokenizer arrays.
//  - ollama-qwen25vl.gguf: the Ollama-only qwen25vl architecture (2 blocks, n_embd 64) with its
//    qwen25vl.* keys, a 3-element mrope section, and the vision tower with the merger and the two
//    patch-embedding halves (v.patch_embd_0/1) under Ollama's names.
// Both use a synthetic vocabulary (byte tokens and short words), F16 matrices and F32 vectors
// (the legacy converter's default kinds), KVs in Ollama's writer order (sorted on the short,
// unprefixed key) and tensors sorted by block then name. Weights are seeded: the same bytes on
// every run.
#pragma once

#include <string>

namespace mlens::demo {

// Writes both files into `dir`. Returns false and prints the reason on failure.
bool write_ollama_demo_models(const std::string& dir);

}  // namespace mlens::demo
