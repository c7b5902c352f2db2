// The demo Ollama store (written by make_demo_models into OUT_DIR/ollama-store): what the app
// opens on first launch. Two models under registry.ollama.ai/library:
//  - tiny-llama:q4_0, a GGUF model (the Q4_0 demo GGUF as its model blob) with template, system,
//    params and license layers;
//  - tiny-moe:int4, a safetensors tensor-blob model as Ollama's MLX engine stores it: an F16
//    embedding, an int4 (affine, group 64) attention projection as U32 + scale + bias, and a
//    packed expert group "model.layers.0.mlp.experts" of 4 stacked experts × {gate,up,down}_proj
//    in one blob, plus a config.json layer.
// Blobs are named by the sha256 of their bytes (core sha256_file); weights are seeded, so every
// blob is identical across runs (manifest mtimes are not).
#pragma once

#include <string>

namespace mlens::demo {

// Writes the store under `root` (created; an existing store there is replaced). Returns false and
// prints the reason on failure.
bool write_demo_store(const std::string& root, const std::string& gguf_model_path);

}  // namespace mlens::demo
