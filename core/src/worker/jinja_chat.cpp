#include "mlens/worker/jinja_chat.h"

// The chat layer's headers carry no JSON library of their own (common_json is a pimpl over the
// vendored nlohmann 3.12, whose ABI namespace differs from the system 3.11 the rest of ModelLens
// uses); this file includes only them, so the two never meet in one translation unit.
#include <chat.h>
#include <log.h>

#include <exception>
#include <stdexcept>

namespace mlens {

namespace {

Error template_error(const std::string& message) { return Error{ErrorCode::E_TEMPLATE, "", std::nullopt, message}; }

// llama-server's defaults for what a request does not say (common/common.h common_params and
// common/arg.cpp, tools/server/server-common.cpp oaicompat_chat_params_parse).
common_chat_templates_inputs server_inputs(const common_chat_templates* templates, const common_json& body, bool add_generation_prompt) {
    common_chat_templates_inputs inputs;
    inputs.messages = common_chat_msgs_parse_oaicompat(body.at("messages"));
    const common_json tools = body.contains("tools") ? body.at("tools") : common_json();
    inputs.tools = common_chat_tools_parse_oaicompat(tools);
    inputs.tool_choice = COMMON_CHAT_TOOL_CHOICE_AUTO;
    inputs.use_jinja = true;
    inputs.parallel_tool_calls = common_chat_templates_get_caps(templates).at("supports_parallel_tool_calls");
    inputs.add_generation_prompt = add_generation_prompt;
    inputs.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;
    inputs.chat_template_kwargs = {{"preserve_reasoning", "true"}};
    return inputs;
}

// The template text the chat layer will parse, so that a parse error is caught here with its
// message: common_chat_templates_init rethrows it as a bare std::exception, whose text is lost.
std::string source_to_check(const Session& session, const JinjaChatRequest& request) {
    if (request.template_source != JinjaTemplateSource::model) return request.template_text;
    const char* text = llama_model_chat_template(session.model(), nullptr);
    if (text && std::string(text) != "chatml") return text;
    return "";
}

// The engine's parser names the position of most errors in its message, but not all ("Unexpected
// token: %} of type 9"). For those, the line is found with the engine itself: the first line
// after which the template cut there fails with the same message (cut earlier, it fails at its
// end, or parses).
std::string with_parse_line(const std::string& message, const std::string& source) {
    if (message.find('^') != std::string::npos) return message;
    uint32_t line = 0;
    for (size_t start = 0;;) {
        ++line;
        const size_t end = source.find('\n', start);
        try {
            common_chat_template parsed(source.substr(0, end), "", "");
        } catch (const std::exception& e) {
            if (message == e.what()) return message + " (line " + std::to_string(line) + ")";
        }
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return message;
}

}  // namespace

Result<JinjaRender> render_jinja_chat(const Session& session, const JinjaChatRequest& request) {
    common_log_set_verbosity_thold(-1);
    LogScope scope(&session.log());
    common_json body;
    try {
        body = common_json::parse(request.conversation);
        if (!body.is_object() || !body.contains("messages"))
            return Error{ErrorCode::E_USAGE, "", std::nullopt, "the conversation needs a \"messages\" array"};
    } catch (const std::exception& e) {
        return Error{ErrorCode::E_USAGE, "", std::nullopt, std::string("the conversation is not JSON: ") + e.what()};
    }
    if (request.template_source != JinjaTemplateSource::model && request.template_text.empty()) return template_error("the template is empty");
    const std::string checked = source_to_check(session, request);
    if (!checked.empty()) {
        try {
            common_chat_template parsed(checked, request.bos_token, request.eos_token);
        } catch (const std::exception& e) { return template_error(with_parse_line(e.what(), checked)); }
    }
    if (request.template_source == JinjaTemplateSource::model && !llama_model_chat_template(session.model(), nullptr) &&
        !llama_model_chat_template(session.model(), "tool_use"))
        return Error{ErrorCode::E_NO_TEMPLATE, "tokenizer.chat_template", std::nullopt, "the file has no chat template"};

    common_chat_templates_ptr templates;
    try {
        if (request.template_source == JinjaTemplateSource::text_alone)
            templates = common_chat_templates_init(nullptr, request.template_text, request.bos_token, request.eos_token);
        else
            templates = common_chat_templates_init(session.model(), request.template_source == JinjaTemplateSource::model ? "" : request.template_text);
    } catch (const std::exception& e) { return template_error(e.what()); }

    common_chat_templates_inputs inputs;
    try {
        inputs = server_inputs(templates.get(), body, request.add_generation_prompt);
    } catch (const std::exception& e) { return Error{ErrorCode::E_USAGE, "", std::nullopt, e.what()}; }

    JinjaRender out;
    try {
        inputs.enable_thinking = common_chat_templates_support_enable_thinking(templates.get());
        const common_chat_params params = common_chat_templates_apply(templates.get(), inputs);
        out.prompt = params.prompt;
        out.format = common_chat_format_name(params.format);
        for (const auto& [name, value] : common_chat_templates_get_caps(templates.get())) out.capabilities.emplace_back(name, value);
        out.supports_thinking = params.supports_thinking;
        out.thinking_start_tag = params.thinking_start_tag;
        out.thinking_end_tags = params.thinking_end_tags;
        out.additional_stops = params.additional_stops;
        out.preserved_tokens = params.preserved_tokens;
        out.has_grammar = !params.grammar.empty();
        out.grammar_lazy = params.grammar_lazy;
        out.generation_prompt = params.generation_prompt;
        if (out.generation_prompt.empty() && request.add_generation_prompt) {
            common_chat_templates_inputs without = inputs;
            without.add_generation_prompt = false;
            const std::string shorter = common_chat_templates_apply(templates.get(), without).prompt;
            if (out.prompt.size() > shorter.size() && out.prompt.starts_with(shorter)) out.generation_prompt = out.prompt.substr(shorter.size());
        }
    } catch (const std::exception& e) { return template_error(e.what()); }
    if (request.template_source == JinjaTemplateSource::text_alone) {
        out.bos_token = request.bos_token;
        out.eos_token = request.eos_token;
    } else {
        const llama_vocab* vocab = session.vocab();
        if (llama_vocab_bos(vocab) != LLAMA_TOKEN_NULL) out.bos_token = common_token_to_piece(vocab, llama_vocab_bos(vocab), true);
        if (llama_vocab_eos(vocab) != LLAMA_TOKEN_NULL) out.eos_token = common_token_to_piece(vocab, llama_vocab_eos(vocab), true);
    }
    return out;
}

}  // namespace mlens
