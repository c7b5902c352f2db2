// Tiny Ollama-made GGUFs of the compat architectures that tiny_models.h does not cover: each in
// the layout Ollama's converter writes for that architecture (spec ollama-compat.md §1.4–§2: its
// architecture name, its key names and its tensor names, the vision tensors in the same file,
// keys in its writer's order), with the smallest dimensions the pinned llama.cpp's loader accepts
// after the compat rewrite (n_embd 32, 4 heads of 8, 1–2 blocks) and a 264-token SentencePiece
// vocabulary of our own (every byte token, so llama.cpp finds the newline). Tensor bytes are zero:
// these files are for the loadability verdict, the dry run and the export, never for inference.
//
// Each model carries what the verdict must say: the verdict's name and the first reason's
// problem name (loadability.h).
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
