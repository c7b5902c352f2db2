// mlens template MODEL [--messages FILE.json] [--against OTHER] [--as-is] [--worker-timeout SECONDS] [--json]
// The template lab (template_lab.h): the conversation rendered by every chat template MODEL (and
// OTHER) carries, each by its runtime's engine, one after another with its capabilities, then the
// differences against the first rendering (first differing byte, the differing parts, the first
// differing token), then the warnings, each with its code. Exit status 0 when every template
// rendered, 1 when one failed to (its warning says why) or the lab could not run, 2 for usage
// errors.
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "mlens/infer/template_lab.h"
#include "mlens/text/escape.h"

namespace mlens::cli {

namespace {

using nlohmann::json;

struct TemplateFlags {
    std::string model, against, messages;
    uint32_t worker_timeout = SessionOptions{}.worker_timeout_s;
    bool json = false, as_is = false;
};

const char* engine_name(TemplateEngine e) { return e == TemplateEngine::llama_jinja ? "llama.cpp chat layer" : "Go text/template"; }

json chat_json(const JinjaRender& c) {
    json caps = json::object();
    for (const auto& [name, value] : c.capabilities) caps[name] = value;
    return {{"format", c.format},
            {"capabilities", caps},
            {"supports_thinking", c.supports_thinking},
            {"thinking_start_tag", c.thinking_start_tag},
            {"thinking_end_tags", c.thinking_end_tags},
            {"generation_prompt", c.generation_prompt},
            {"additional_stops", c.additional_stops},
            {"preserved_tokens", c.preserved_tokens},
            {"has_grammar", c.has_grammar},
            {"grammar_lazy", c.grammar_lazy},
            {"bos_token", c.bos_token},
            {"eos_token", c.eos_token}};
}

json rendering_json(const TemplateRendering& r) {
    json tokens = json::array();
    for (const TokenPiece& t : r.tokens) tokens.push_back({{"id", t.id}, {"piece", t.piece}, {"control", t.control}, {"eog", t.eog}});
    json out = {{"side", r.side},     {"model", shown_path(r.model)},       {"source", r.tmpl.source},    {"where", r.tmpl.where},
                {"engine", r.tmpl.engine == TemplateEngine::llama_jinja ? "llama.cpp" : "go"},    {"template", r.tmpl.text},
                {"rendered", r.rendered}, {"prompt", r.prompt}, {"tokens", tokens},          {"tokenized_by", r.tokenized_by}};
    if (r.chat) out["chat"] = chat_json(*r.chat);
    if (r.failure) out["failure"] = {{"message", r.failure->message}, {"line", r.failure->line}, {"column", r.failure->column}};
    return out;
}

json lab_json(const TemplateLabResult& lab) {
    json renderings = json::array(), differences = json::array(), warnings = json::array();
    for (const TemplateRendering& r : lab.renderings) renderings.push_back(rendering_json(r));
    for (const TemplateDifference& d : lab.differences) {
        json j = {{"rendering", d.rendering}, {"reference", d.reference}, {"same_text", d.same_text}, {"compared_tokens", d.compared_tokens},
                  {"same_ids", d.same_ids}};
        if (!d.same_text) {
            j["first_byte"] = d.first_byte;
            j["common_before"] = d.common_before;
            j["reference_part"] = d.reference_part;
            j["rendering_part"] = d.rendering_part;
        }
        if (d.compared_tokens && !d.same_ids) j["first_token"] = d.first_token;
        differences.push_back(std::move(j));
    }
    for (const TemplateWarning& w : lab.warnings) warnings.push_back({{"code", w.code}, {"rendering", w.rendering}, {"message", w.message}});
    return {{"conversation", lab.conversation}, {"renderings", renderings}, {"differences", differences}, {"warnings", warnings}};
}

// The prompt line by line, each newline shown as ↵ where it was, everything invisible escaped.
void print_prompt(const std::string& prompt) {
    size_t start = 0;
    while (start <= prompt.size()) {
        const size_t end = prompt.find('\n', start);
        const std::string line = prompt.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (end == std::string::npos && line.empty() && start > 0) break;
        std::cout << "    | " << escape_for_display(line, 2000) << (end == std::string::npos ? "" : "\xE2\x86\xB5") << "\n";
        if (end == std::string::npos) break;
        start = end + 1;
    }
}

std::string label(const TemplateLabResult& lab, size_t i) {
    const TemplateRendering& r = lab.renderings[i];
    return "[" + std::to_string(i + 1) + "] " + (r.side == "against" ? "against " : "") + r.tmpl.source;
}

void print_rendering(const TemplateLabResult& lab, size_t i) {
    const TemplateRendering& r = lab.renderings[i];
    std::cout << label(lab, i) << ": " << escape_for_display(r.tmpl.where) << " of " << escape_for_display(shown_path(r.model)) << ", by the "
              << engine_name(r.tmpl.engine) << "\n";
    if (!r.rendered) {
        std::cout << "  did not render; the engine says:\n";
        print_prompt(r.failure->message);
        return;
    }
    if (r.chat) {
        std::string caps;
        for (const auto& [name, value] : r.chat->capabilities)
            if (value) caps += (caps.empty() ? "" : ", ") + name.substr(name.starts_with("supports_") ? 9 : 0);
        std::cout << "  format " << r.chat->format << "; supports " << (caps.empty() ? "nothing more" : caps)
                  << "; thinking " << (r.chat->supports_thinking ? "yes (" + escape_for_display(r.chat->thinking_start_tag) + ")" : "no") << "\n";
        std::cout << "  generation prompt \"" << escape_for_display(r.chat->generation_prompt) << "\"";
        if (!r.chat->additional_stops.empty()) {
            std::cout << "; additional stops";
            for (const std::string& s : r.chat->additional_stops) std::cout << " \"" << escape_for_display(s) << "\"";
        }
        std::cout << "\n";
    }
    std::cout << "  prompt, " << r.prompt.size() << " bytes, " << r.tokens.size() << " tokens by " << escape_for_display(r.tokenized_by)
              << ":\n";
    print_prompt(r.prompt);
    std::cout << "  ids:";
    for (const TokenPiece& t : r.tokens) std::cout << " " << t.id;
    std::cout << "\n";
}

void print_lab(const TemplateLabResult& lab) {
    const size_t n_messages = lab.conversation["messages"].size(), n_tools = lab.conversation["tools"].size();
    std::cout << "conversation: " << n_messages << (n_messages == 1 ? " message, " : " messages, ") << n_tools
              << (n_tools == 1 ? " tool" : " tools") << ", add_generation_prompt "
              << (lab.conversation.value("add_generation_prompt", true) ? "true" : "false") << "\n";
    if (lab.renderings.empty()) std::cout << "no chat template found\n";
    for (size_t i = 0; i < lab.renderings.size(); ++i) {
        std::cout << "\n";
        print_rendering(lab, i);
    }
    if (!lab.differences.empty()) std::cout << "\ndifferences\n";
    for (const TemplateDifference& d : lab.differences) {
        std::cout << "  " << label(lab, d.rendering) << " against " << label(lab, d.reference) << ": ";
        if (d.same_text) {
            std::cout << "same text";
        } else {
            std::cout << "differs from byte " << d.first_byte << ", after \"" << escape_for_display(d.common_before) << "\": \""
                      << escape_for_display(d.reference_part) << "\" became \"" << escape_for_display(d.rendering_part) << "\"";
        }
        if (d.compared_tokens) std::cout << (d.same_ids ? "; same token ids" : "; token ids differ from token " + std::to_string(d.first_token));
        std::cout << "\n";
    }
    if (!lab.warnings.empty()) std::cout << "\nwarnings\n";
    for (const TemplateWarning& w : lab.warnings) std::cout << "  " << w.code << " " << label(lab, w.rendering) << ": " << w.message << "\n";
}

int run_template(const TemplateFlags& f) {
    TemplateLabRequest request;
    request.model = f.model;
    request.against = f.against;
    request.session.as_is = f.as_is;
    request.session.worker_timeout_s = f.worker_timeout;
    if (!f.messages.empty()) {
        auto conversation = read_conversation(f.messages);
        if (!conversation) return fail(f.messages, conversation.error());
        request.conversation = std::move(conversation).value();
    }
    auto lab = run_template_lab(request);
    if (!lab) return fail(f.model, lab.error());
    if (f.json)
        print_json_result(lab_json(*lab));
    else
        print_lab(*lab);
    for (const TemplateRendering& r : lab->renderings)
        if (!r.rendered) return kExitBroken;
    return kExitOk;
}

}  // namespace

void add_template_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("template", "Render a conversation through every chat template a model carries and compare them");
    auto f = std::make_shared<TemplateFlags>();
    cmd->add_option("MODEL", f->model, "GGUF file, Ollama model or safetensors folder")->required();
    cmd->add_option("--messages", f->messages,
                    "Conversation as OpenAI chat messages (JSON array, or {messages, tools, add_generation_prompt}); default: a "
                    "system and a user turn");
    cmd->add_option("--against", f->against, "Another model whose templates are rendered and compared too");
    cmd->add_flag("--as-is", f->as_is, "Hand an Ollama-made GGUF to llama.cpp unmodified");
    add_worker_timeout(cmd, f->worker_timeout);
    cmd->add_flag("--json", f->json, "Print JSON");
    cmd->callback([f, &exit_code] { exit_code = run_template(*f); });
}

}  // namespace mlens::cli
