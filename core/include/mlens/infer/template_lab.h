// The template lab: one conversation rendered through every chat template a model carries, by the
// engine that runtime uses, the strings compared byte by byte, then tokenized by the model's own
// tokenizer and compared id by id, with the problems that make one runtime answer differently
// from another as warnings. `mlens template` and the app's Template view both show this one answer.
//
// The conversation (what --messages reads): OpenAI's chat-completions form, either a JSON array
// of messages or an object {"messages": [...], "tools": [...], "add_generation_prompt": bool}.
// A message is {"role": "system"|"user"|"assistant"|"tool", "content": string|null,
// "reasoning_content": string (an assistant's thinking), "tool_calls": [{"id", "type":
// "function", "function": {"name", "arguments": JSON text or object}}], "tool_call_id" and
// "name" (a tool result)}; a tool is {"type": "function", "function": {"name", "description",
// "parameters"}}. Anything else in a message or the object is refused with its name (E_USAGE).
// Without a file, default_conversation(): a system turn and a user turn. add_generation_prompt
// defaults to true.
//
// The templates of a model (find_templates), in this order:
//  - a GGUF (a file, or a store model's model layer): tokenizer.chat_template, source "gguf",
//    rendered as llama-server renders the file's template (JinjaTemplateSource::model: with
//    tools, its tool_use variant when it has one); then each tokenizer.chat_template.<name>,
//    source "gguf:<name>", rendered as llama-server --chat-template-file renders it;
//  - an Ollama store model: its TEMPLATE layer (the last one), source "ollama", rendered by Go's
//    text/template as Ollama does (go_template_render.h) on the conversation in Ollama's form
//    (ollama_conversation); a model without one gets Ollama's default "{{ .Prompt }}", source
//    "ollama:default";
//  - a safetensors folder: chat_template.jinja, source "hub", else tokenizer_config.json's
//    "chat_template" (a string: "hub"; a list of {name, template}: "hub:<name>" each), rendered
//    by the chat layer on their own (JinjaTemplateSource::text_alone) with tokenizer_config.json's
//    bos_token and eos_token (a string or {"content"}): the string transformers renders, BOS text
//    included. The files are read up to kMaxTemplateFileBytes.
// Jinja templates render in the llama.cpp worker of a GGUF: the model's own, or for a folder the
// other side's GGUF (a folder on its own, or against another folder, is E_USAGE: there is no
// llama.cpp to render and tokenize with).
//
// Tokens: each rendering is tokenized as llama-server tokenizes a prompt (add_special and
// parse_special), by its own side's GGUF, a folder's by the other side's.
//
// Differences: every rendering is compared with the reference, the first rendering of the model
// that rendered: same text or the first differing byte with a compact diff (up to kDiffContext
// bytes of common text before it, then each side's differing part after the common prefix and
// before the common suffix, each cut at kDiffPartBytes), and the token ids (same, or the first
// differing index).
//
// Warnings, each with a stable code:
//  - W_TEMPLATE_FAILED: a template did not parse or render: the engine's message and its line
//    (chat_render.h template_failure; Go names the line itself, "template: :3: ...").
//  - W_DOUBLE_BOS: the tokens start with BOS twice: the template wrote the BOS text and the
//    tokenizer added BOS too.
//  - W_NO_GENERATION_PROMPT (add_generation_prompt only): a Jinja rendering whose template adds
//    no assistant prefix (its generation prompt is empty), or that does not end with it; an Ollama
//    rendering that does not end with the generation prompt of the model's GGUF template (of the
//    same side, else the other side's), when there is one.
//  - W_STOP_NOT_EOG: a token of the rendering that ends a turn (its text is one of
//    kTurnEndMarkers, or one of the chat layer's additional_stops) and that the model does not
//    stop on (not in its end-of-generation set): generation runs past the end of the turn.
//    Once per rendering and token id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlens/infer/chat_render.h"
#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens {

constexpr uint64_t kMaxTemplateFileBytes = 4ull << 20;
constexpr size_t kDiffContext = 24;
constexpr size_t kDiffPartBytes = 160;
inline const std::vector<std::string> kTurnEndMarkers = {"<|im_end|>", "<end_of_turn>", "<|eot_id|>",       "<|eom_id|>", "<|end|>",
                                                         "<|return|>", "<|call|>",      "<|endoftext|>",    "<|end_of_text|>",
                                                         "</s>",       "<turn|>",       "<|end_of_turn|>"};

// The conversation: {"messages", "tools" (maybe empty), "add_generation_prompt"}.
nlohmann::json default_conversation();
// A conversation given as JSON (see above), checked and normalised to that form.
Result<nlohmann::json> parse_conversation(const nlohmann::json& given);
// parse_conversation of a file's JSON (at most kMaxTemplateFileBytes).
Result<nlohmann::json> read_conversation(const std::string& path);
// The same conversation in Ollama's /api/chat form (go_template_render.h): reasoning_content as
// "thinking", arguments as objects, a tool result's tool name from "name" or from the call its
// tool_call_id answers.
nlohmann::json ollama_conversation(const nlohmann::json& conversation);

enum class TemplateEngine { llama_jinja, ollama_go };

struct ModelTemplate {
    std::string source;  // "gguf", "gguf:<name>", "ollama", "ollama:default", "hub", "hub:<name>"
    std::string where;  // the key, layer or file it came from
    TemplateEngine engine = TemplateEngine::llama_jinja;
    JinjaTemplateSource jinja_source = JinjaTemplateSource::text_with_model;
    std::string text;
    std::string bos_token, eos_token;  // hub templates
};

struct ModelTemplates {
    std::string model;  // as given
    std::string kind;  // target_kind_name
    bool has_gguf = false;  // a GGUF llama.cpp can load: renders and tokenizes
    std::vector<ModelTemplate> templates;
};

// The templates of the model `text` names (open/target.h), as listed above, for a load with
// SessionOptions::as_is as given. A model with none is not an error: its list is empty.
Result<ModelTemplates> find_templates(const std::string& text, bool as_is = false);

struct TemplateRendering {
    std::string side;  // "model" or "against"
    std::string model;  // as given
    ModelTemplate tmpl;
    bool rendered = false;
    std::string prompt;
    std::optional<TemplateFailure> failure;
    std::optional<JinjaRender> chat;  // Jinja renderings: what the chat layer reported
    std::vector<TokenPiece> tokens;
    std::string tokenized_by;  // the model whose tokenizer gave `tokens`
};

struct TemplateDifference {
    size_t rendering = 0;  // index into renderings
    size_t reference = 0;
    bool same_text = false;
    uint64_t first_byte = 0;  // when not same_text
    std::string common_before;  // up to kDiffContext bytes before first_byte
    std::string reference_part, rendering_part;  // the differing middles, each cut at kDiffPartBytes
    bool compared_tokens = false;  // both were tokenized
    bool same_ids = false;
    uint64_t first_token = 0;  // the first differing token index, when not same_ids
};

struct TemplateWarning {
    std::string code;
    size_t rendering = 0;
    std::string message;
};

struct TemplateLabRequest {
    std::string model;
    std::string against;  // "" for none
    std::optional<nlohmann::json> conversation;  // parsed; nullopt: default_conversation()
    SessionOptions session;  // how the GGUFs are loaded (vocab_only is set)
};

struct TemplateLabResult {
    nlohmann::json conversation;
    std::vector<TemplateRendering> renderings;
    std::vector<TemplateDifference> differences;
    std::vector<TemplateWarning> warnings;
};

Result<TemplateLabResult> run_template_lab(const TemplateLabRequest& request, JobContext* job = nullptr);

// What a lab result says once its renderings and tokens are in (the diffing and warning half of
// run_template_lab, exposed so that it can be checked on renderings made by hand). bos: the BOS
// id of each rendering's tokenizer (-1 none).
void compare_renderings(TemplateLabResult& result, const std::vector<int32_t>& bos, bool add_generation_prompt);

}  // namespace mlens
