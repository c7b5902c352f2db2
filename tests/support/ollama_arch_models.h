// Tiny Ollama-made GGUFs of the compat architectures that tiny_models.h does not cover: each in
// the layout Ollama's converter writes for that architecture (spec ollama-compat.md §1.4–§2: its
// architecture name, its key names and its tensor names, the vision tensors in the same file,
// keys in its writer's order), with the smallest dimensions the pinned llama.cpp's loader accepts
// after the compat rewrite (n_embd 32, 4 heads of 8, 1–2 blocks) and a 264-token SentencePiece
// vocabulary of our own (every byte token, so llama.cpp finds the newline). Tensor bytes are zero:
// these files are for the loadability verdict, the dry run and the export, never for inference.
//
// One model per architecture the shim handles beyond those: olmo3, llama4, mistral3, qwen3vl,
// qwen3vlmoe, glmocr, embeddinggemma (gemma3 with dense.* tensors), glm4moelite, deepseekocr,
// laguna, gemma3n, gemma4, snowflake-arctic-embed2 (bert with a T5 charsmap), and the recurrent
// hybrids qwen3next, qwen35, qwen35moe, nemotron_h_omni, nemotron_h_moe (ollama_hybrid_models.cpp).
// Every one loads in the pinned llama.cpp only after the compat rewrite. Each carries what the
// verdict must say: the verdict's name and the first reason's problem name (loadability.h).
#pragma once

#include <string>
#include <vector>

#include "compat_fixture.h"

namespace mlens::test {

struct OllamaArchModel {
    std::string name;  // file name
    OllamaGguf gguf;
    std::string verdict;
    std::string first_problem;
};

std::vector<OllamaArchModel> ollama_arch_models();

}  // namespace mlens::test
