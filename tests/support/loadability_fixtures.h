// One GGUF per reason llama.cpp refuses a file (loadability.h), written by our own writer from
// the F32 demo model or byte by byte where the layout itself is the fault, and the Ollama-made
// files of the compat architectures; each with the verdict and first reason it must get. The
// static verdict's tests and the dry run's agreement test share them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mlens/model/model.h"
#include "test_paths.h"

namespace mlens::test {

struct LoadFixture {
    std::string name;
    std::string path;
    std::string verdict;  // load_verdict_name
    size_t reasons = 0;  // how many reasons
    std::string problem;  // the first reason's load_problem_name, its subject, text and fix
    std::string subject;
    std::string text;
    std::string fix;
    std::string said;  // what llama.cpp's own load says about it (part of its error)
};

// Writes the fixtures into `dir`: unknown architecture, a near-miss architecture name, a key and
// a tensor name given twice, a missing
// required key, an extra tensor, a missing tensor, a token_embd one row short of the vocabulary, an
// embedding length the tensors do not have, no token list, no tokenizer model, a tokenizer
// model llama.cpp does not know, one stored as a number, a gpt2 tokenizer without merges, a
// "none" tokenizer beside 32000-row embeddings, a
// load-time assert, a type id the linked ggml
// does not know, a Q4_K tensor written with a 128-weight block.
std::vector<LoadFixture> load_fixtures(const TempDir& dir);

struct OllamaFixture {
    std::string path;
    std::string verdict;
    std::string first_problem;
};

// The Ollama-made files: the demo gemma3 and qwen25vl GGUFs, the tiny gemma3, lfm2, gptoss and
// llama3 models in Ollama's layout (tiny_models.h) and one tiny file of every other compat
// architecture (ollama_arch_models.h), written into `dir`. first_problem is empty for a file that
// loads as it is.
std::vector<OllamaFixture> ollama_fixtures(const TempDir& dir);

// A demo model (the F32 one unless named), edited, written to `path` (tensor bytes from the demo
// file; a tensor the edit adds is zeros).
void write_demo_variant(const std::string& path, const std::function<void(Model&)>& edit, const std::string& demo = "tiny-llama-f32.gguf");
void set_metadata(Model& model, const std::string& key, Value value);
void remove_metadata(Model& model, const std::string& key);
Value f32_value(float v);

}  // namespace mlens::test
