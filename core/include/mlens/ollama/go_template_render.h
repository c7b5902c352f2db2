// Rendering an Ollama Go template (a model's TEMPLATE layer) the way Ollama's server renders it:
// by Go's own text/template, in the helper program mlens-ollama-template (app/ollama_template,
// whose main.go states the data model: message collation, the legacy System/Prompt/Response form,
// tools and tool calls as Ollama prints them).
//
// Contract:
//  - render_go_template(template, conversation) hands the helper {"template", "messages",
//    "tools"} and returns the rendered prompt byte for byte.
//  - conversation: {"messages": [{"role", "content", optional "thinking", "tool_name",
//    "tool_calls": [{"function": {"name", "arguments": {...}}}]}], optional "tools": [...]} — the
//    body of Ollama's /api/chat. Anything else in it is E_USAGE naming the field.
//  - A template Go cannot parse or execute is E_TEMPLATE with Go's message, which names the line
//    and column ("template: :3: unexpected \"}\" in operand").
//  - The helper is found as MLENS_OLLAMA_TEMPLATE (environment), beside the running program, or
//    through program_files.h; none: E_NO_WORKER. It runs with a 10 s limit (killed after:
//    E_TEMPLATE saying so); its output is capped at 64 MiB.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "mlens/result.h"

namespace mlens {

Result<std::string> render_go_template(const std::string& template_text, const nlohmann::json& conversation);

// The path of mlens-ollama-template, empty when it is not found.
std::string go_template_helper();

}  // namespace mlens
