#include "mlens/ollama/go_template_render.h"

#include "mlens/util/helper_process.h"
#include "mlens/util/program_files.h"

namespace mlens {

namespace {

constexpr int kTimeoutMs = 10000;
constexpr size_t kOutputCap = 64u << 20;

Error usage(std::string message) { return Error{ErrorCode::E_USAGE, "", std::nullopt, std::move(message)}; }

// The request's conversation, checked against the fields the helper knows, so a mistyped field is
// named here rather than as Go's decoding error.
Status check_conversation(const nlohmann::json& c) {
    if (!c.is_object()) return usage("the conversation must be a JSON object with \"messages\" (and \"tools\")");
    for (const auto& [key, value] : c.items())
        if (key != "messages" && key != "tools") return usage("unknown field \"" + key + "\" in the conversation (messages, tools)");
    if (!c.contains("messages") || !c["messages"].is_array()) return usage("the conversation needs a \"messages\" array");
    for (size_t i = 0; i < c["messages"].size(); ++i) {
        const nlohmann::json& m = c["messages"][i];
        const std::string where = "messages[" + std::to_string(i) + "]";
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) return usage(where + " needs a \"role\" string");
        for (const auto& [key, value] : m.items())
            if (key != "role" && key != "content" && key != "thinking" && key != "tool_name" && key != "tool_calls" && key != "images" &&
                key != "tool_call_id")
                return usage("unknown field \"" + key + "\" in " + where);
    }
    if (c.contains("tools") && !c["tools"].is_array()) return usage("\"tools\" must be an array");
    return ok_status();
}

}  // namespace

std::string go_template_helper() {
    return helper_program("MLENS_OLLAMA_TEMPLATE", "mlens-ollama-template", MLENS_OLLAMA_TEMPLATE_INSTALLED, MLENS_OLLAMA_TEMPLATE_BUILD_TREE);
}

Result<std::string> render_go_template(const std::string& template_text, const nlohmann::json& conversation) {
    if (Status s = check_conversation(conversation); !s) return s.error();
    const std::string helper = go_template_helper();
    if (helper.empty())
        return Error{ErrorCode::E_NO_WORKER, "", std::nullopt,
                     "mlens-ollama-template, which renders Ollama's Go templates, was not found next to this program"};
    nlohmann::json request = conversation;
    request["template"] = template_text;
    const std::string input = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

    auto run = run_helper_process(helper, {}, input, kTimeoutMs, kOutputCap);
    if (!run) return run.error();
    HelperExit& x = *run;
    if (x.timed_out) return Error{ErrorCode::E_TEMPLATE, "", std::nullopt, "the template did not finish rendering in 10 s"};
    if (x.too_large) return Error{ErrorCode::E_TEMPLATE, "", std::nullopt, "the rendered template is larger than 64 MiB"};
    while (!x.err.empty() && x.err.back() == '\n') x.err.pop_back();
    if (x.exit_code == 0) return x.out;
    if (x.exit_code == 1) return Error{ErrorCode::E_TEMPLATE, "", std::nullopt, x.err};
    return Error{ErrorCode::E_NO_WORKER, "", std::nullopt, "mlens-ollama-template failed: " + (x.err.empty() ? "no message" : x.err)};
}

}  // namespace mlens
