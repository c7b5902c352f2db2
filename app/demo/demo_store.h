// The demo Ollama store (written by make_demo_models into OUT_DIR/ollama-store): what the app
// opens on first launch. Six models under registry.ollama.ai/library, the safetensors ones laid
// out as Ollama's MLX engine stores them (ollama-store.md §4) by the writers of demo_blobs.h,
// their weights the seeded sources of demo_source.h (hidden size 64, vocabulary 32):
//  - tiny-llama:q4_0, a GGUF model (the Q4_0 demo GGUF as its model blob) with template, system,
//    params and license layers.
//  - tiny-mlx:mixed, a dense layer with one blob per tensor, each quantized its own way: q_proj
//    int4 g64, k_proj int8 g64, v_proj int4 g32 (F16 scales), o_proj nvfp4 as a prequantized
//    ModelOpt import (T.global_scale, quant_type only, so group 16 from the table), gate_proj
//    nvfp4 g16, up_proj mxfp4 g32, down_proj mxfp8 g32, lm_head int8 g64 (blob-wide quant_type /
//    group_size keys); embedding and norms BF16; template, params and license layers.
//  - tiny-moe:int4, current layout: an F16 embedding, q_proj int4 g64 (F16 scales) and the group
//    "model.layers.0.mlp.experts" of 4 experts x {gate,up,down}_proj stacked [4, 64, 64], int4
//    g64, all in one blob named by the group; config.json carries quantization bits 4.
//  - tiny-moe-shared:int4, current layout with per-projection quantization: stacked experts
//    gate/up int4 g64 and down int8 g64, one blob per stacked tensor; the shared expert
//    "model.layers.0.mlp.shared_experts" as 2-D tensors, one blob each (same types); the BF16
//    router "model.layers.0.mlp.gate.weight"; system, params and license layers.
//  - tiny-moe-legacy:per-expert, the 2026-02 layout: q_proj int4 g32 with blob keys; per-expert
//    2-D tensors "model.layers.0.mlp.experts.<e>.<proj>.weight" (4 experts) in one blob named
//    "model.layers.0.mlp.experts", and the shared expert's tensors in one blob named
//    "model.layers.0.mlp.shared_experts", int4 g32 with "__metadata__":null (read from the shapes);
//    template and license layers.
//  - tiny-moe-legacy:switch-mlp, the 2026-03 to 2026-07 layout: q_proj int4 g64 with both blob
//    and per-tensor keys; "model.layers.0.mlp.switch_mlp.{gate,up,down}_proj.weight" stacked
//    [4, 64, 64] in one blob named "model.layers.0.mlp.experts", a mixed-precision blob (gate/up
//    int4 g64, down int8 g64) with per-tensor "<T>.quant_type" / "<T>.group_size" keys only;
//    a license layer.
// Every safetensors model has a config.json layer and a config blob as Ollama's safetensors create
// writes it. Affine scales and biases are BF16 unless noted. Blobs are named by the sha256 of
// their bytes (core sha256_file); every blob is identical across runs (manifest mtimes are not).
#pragma once

#include <string>

namespace mlens::demo {

// Writes the store under `root` (created; an existing store there is replaced). Returns false and
// prints the reason on failure.
bool write_demo_store(const std::string& root, const std::string& gguf_model_path);

}  // namespace mlens::demo
