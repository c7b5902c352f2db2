// Chat-template fixtures for the template lab tests, written by our own GGUF writer: vocab-only
// GGUFs (a real upstream vocabulary from the pinned llama.cpp source, its tokenizer keys as they
// are) carrying the chat templates a test gives, Hugging Face folders with a chat_template.jinja
// and tokenizer_config.json, and conversations with a system turn, tool calls and a reasoning turn.
//
//  - write_template_gguf(path, vocab, templates, rename): every key of models/<vocab> (a
//    vocab-only GGUF: architecture, hyperparameters, tokenizer), its own chat templates left out,
//    then the templates given ("" names tokenizer.chat_template, "x" tokenizer.chat_template.x);
//    `rename` replaces the text of vocabulary entries (id -> new text, type kept).
//  - write_hub_folder(dir, template, bos, eos): chat_template.jinja and a tokenizer_config.json
//    with bos_token / eos_token (as added-token objects) and a one-tensor model.safetensors.
//  - kChatml*: ChatML templates that differ only in whitespace, in BOS handling and in the
//    generation prompt, each with a tool-call and a reasoning branch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlens::test {

void write_template_gguf(const std::string& path, const std::string& vocab, const std::vector<std::pair<std::string, std::string>>& templates,
                         const std::map<int32_t, std::string>& rename = {});
void write_hub_folder(const std::string& dir, const std::string& chat_template, const std::string& bos, const std::string& eos);

// A system turn, a user turn, an assistant turn with reasoning_content and a tool call, the tool's
// result, and a last user turn; one tool.
nlohmann::json tool_and_reasoning_conversation();

extern const char* const kChatml;  // ChatML with reasoning in <think> and tool calls as JSON
extern const char* const kChatmlSpaced;  // the same with a space before each newline after the role
extern const char* const kChatmlBos;  // the same with {{ bos_token }} first
extern const char* const kChatmlNoGeneration;  // the same without the generation prompt
extern const char* const kChatmlBroken;  // a filter the engine does not have, on line 3

}  // namespace mlens::test
