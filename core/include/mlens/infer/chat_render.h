// A Jinja chat template rendered by the pinned llama.cpp's chat layer (common/chat.h) exactly as
// llama-server renders a /v1/chat/completions or /apply-template request with its defaults: what
// goes in (JinjaChatRequest) and what comes out (JinjaRender). The rendering itself runs in the
// llama.cpp worker (JinjaChatOp in operations.h; worker/jinja_chat.h).
//
// Contract:
//  - conversation: OpenAI's chat-completions body as JSON text, {"messages": [...], "tools":
//    [...]} ("tools" optional), read by llama.cpp's own common_chat_msgs_parse_oaicompat and
//    common_chat_tools_parse_oaicompat: role, content (a string, null, or text parts),
//    reasoning_content, tool_calls [{id, type, function: {name, arguments}}] (arguments a JSON
//    string or object), tool_call_id and name for tool results.
//  - template_source: which template the chat layer initialises with —
//      JinjaTemplateSource::model: the file's own, as llama-server without --chat-template
//        (common_chat_templates_init(model, "")): tokenizer.chat_template, with the
//        tokenizer.chat_template.tool_use variant used when tools are given; BOS/EOS text and
//        add_bos from the vocabulary;
//      JinjaTemplateSource::text_with_model: template_text with the model's BOS/EOS and add_bos
//        (llama-server --chat-template-file);
//      JinjaTemplateSource::text_alone: template_text with bos_token/eos_token as given and no
//        model (add_bos false): how a Hugging Face template renders on its own, the BOS text it
//        writes kept.
//  - The inputs besides are llama-server's defaults: use_jinja, add_generation_prompt as given
//    (true by default), tool_choice auto, parallel_tool_calls as the template's capability says,
//    reasoning_format deepseek, enable_thinking when the template supports it
//    (common_chat_templates_support_enable_thinking), chat_template_kwargs {"preserve_reasoning":
//    true} (common/arg.cpp's default), no grammar, no JSON schema.
//  - JinjaRender: prompt (byte for byte), format (common_chat_format_name), the capabilities the
//    chat layer detects (jinja::caps, by the names llama-server's /props reports:
//    supports_tools, supports_tool_calls, supports_system_role, ...), supports_thinking with the
//    thinking tags, the generation prompt, additional_stops, preserved_tokens, whether a grammar
//    was produced and whether it is lazy, and the BOS/EOS text the template saw.
//    generation_prompt is the chat layer's own when it sets one, else the text that
//    add_generation_prompt adds (the rendering without it is a prefix of the one with it, the
//    chat layer's own method); "" when add_generation_prompt is false or the template ignores it.
//  - A template that does not parse or fails to render is ErrorCode::E_TEMPLATE whose message is
//    the engine's own text; TemplateFailure (template_failure) reads the line and column out of
//    it: the engine's "line N, column M" for a render error, else the position its source
//    excerpt points at (lexer and parser errors quote the source around it). A parser error
//    without either gets " (line N)" appended in the worker: the first line after which the
//    template cut there fails to parse with the same message. line 0: unknown.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlens {

enum class JinjaTemplateSource { model, text_with_model, text_alone };

struct JinjaChatRequest {
    std::string conversation;  // {"messages": [...], "tools": [...]} as JSON text
    JinjaTemplateSource template_source = JinjaTemplateSource::model;
    std::string template_text;  // text_with_model, text_alone
    std::string bos_token, eos_token;  // text_alone
    bool add_generation_prompt = true;
};

struct JinjaRender {
    std::string prompt;
    std::string format;
    std::vector<std::pair<std::string, bool>> capabilities;  // in the chat layer's order
    bool supports_thinking = false;
    std::string thinking_start_tag;
    std::vector<std::string> thinking_end_tags;
    std::string generation_prompt;
    std::vector<std::string> additional_stops;
    std::vector<std::string> preserved_tokens;
    bool has_grammar = false;
    bool grammar_lazy = false;
    std::string bos_token, eos_token;
};

struct TemplateFailure {
    std::string message;  // the engine's words
    uint32_t line = 0;  // 1-based; 0: the engine names no position
    uint32_t column = 0;
};

// The failure of an E_TEMPLATE message from the chat layer, with the line and column found in it
// (see above) in `source`, the template text.
TemplateFailure template_failure(const std::string& message, const std::string& source);

}  // namespace mlens
