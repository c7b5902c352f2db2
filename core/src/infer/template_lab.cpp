#include "mlens/infer/template_lab.h"

#include <filesystem>
#include <map>
#include <memory>

#include "mlens/compat/load_rewrite.h"
#include "mlens/infer/worker_session.h"
#include "mlens/io/text_file.h"
#include "mlens/ollama/go_template_render.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/open/target.h"

namespace mlens {

namespace {

using nlohmann::json;

Error usage(std::string message) { return Error{ErrorCode::E_USAGE, "", std::nullopt, std::move(message)}; }

bool allowed(const std::string& key, std::initializer_list<const char*> keys) {
    for (const char* k : keys)
        if (key == k) return true;
    return false;
}

Status check_tool_call(const json& call, const std::string& where) {
    if (!call.is_object()) return usage(where + " must be an object");
    for (const auto& [key, value] : call.items())
        if (!allowed(key, {"id", "type", "function"})) return usage("unknown field \"" + key + "\" in " + where);
    if (!call.contains("function") || !call["function"].is_object()) return usage(where + " needs a \"function\" object");
    const json& f = call["function"];
    for (const auto& [key, value] : f.items())
        if (!allowed(key, {"name", "arguments"})) return usage("unknown field \"" + key + "\" in " + where + ".function");
    if (!f.contains("name") || !f["name"].is_string()) return usage(where + ".function needs a \"name\" string");
    if (f.contains("arguments")) {
        const json& a = f["arguments"];
        if (a.is_string()) {
            const json parsed = json::parse(a.get<std::string>(), nullptr, false);
            if (parsed.is_discarded() || !parsed.is_object()) return usage(where + ".function.arguments is not the JSON text of an object");
        } else if (!a.is_object()) {
            return usage(where + ".function.arguments must be an object or its JSON text");
        }
    }
    return ok_status();
}

Status check_message(const json& m, const std::string& where) {
    if (!m.is_object()) return usage(where + " must be an object");
    for (const auto& [key, value] : m.items())
        if (!allowed(key, {"role", "content", "reasoning_content", "tool_calls", "tool_call_id", "name"}))
            return usage("unknown field \"" + key + "\" in " + where);
    if (!m.contains("role") || !m["role"].is_string()) return usage(where + " needs a \"role\" string");
    if (m.contains("content")) {
        const json& c = m["content"];
        if (c.is_array()) {
            for (const json& part : c)
                if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
                    return usage(where + ".content parts must be {\"type\": \"text\", \"text\": ...}");
        } else if (!c.is_string() && !c.is_null()) {
            return usage(where + ".content must be a string, null or text parts");
        }
    }
    for (const char* key : {"reasoning_content", "tool_call_id", "name"})
        if (m.contains(key) && !m[key].is_string()) return usage(where + "." + key + " must be a string");
    if (m.contains("tool_calls")) {
        if (!m["tool_calls"].is_array()) return usage(where + ".tool_calls must be an array");
        for (size_t i = 0; i < m["tool_calls"].size(); ++i)
            if (Status s = check_tool_call(m["tool_calls"][i], where + ".tool_calls[" + std::to_string(i) + "]"); !s) return s;
    }
    return ok_status();
}

std::string content_text(const json& content) {
    if (content.is_string()) return content.get<std::string>();
    std::string text;
    if (content.is_array())
        for (const json& part : content) text += part["text"].get<std::string>();
    return text;
}

// A BOS or EOS entry of tokenizer_config.json: a string, or an added token {"content": ...}.
std::string token_text(const json& config, const char* key) {
    if (!config.contains(key)) return "";
    const json& t = config[key];
    if (t.is_string()) return t.get<std::string>();
    if (t.is_object() && t.contains("content") && t["content"].is_string()) return t["content"].get<std::string>();
    return "";
}

Result<json> read_json_file(const std::string& path) {
    auto text = read_text_file(path, kMaxTemplateFileBytes);
    if (!text) return text.error();
    json parsed = json::parse(*text, nullptr, false);
    if (parsed.is_discarded()) return Error{ErrorCode::E_USAGE, path, std::nullopt, path + " is not JSON"};
    return parsed;
}

Status add_hub_templates(const std::string& folder, ModelTemplates& out) {
    namespace fs = std::filesystem;
    std::error_code ec;
    json config = json::object();
    const std::string config_path = folder + "/tokenizer_config.json";
    if (fs::exists(config_path, ec)) {
        auto parsed = read_json_file(config_path);
        if (!parsed) return parsed.error();
        if (parsed->is_object()) config = std::move(parsed).value();
    }
    const std::string bos = token_text(config, "bos_token"), eos = token_text(config, "eos_token");
    auto add = [&](std::string source, std::string where, std::string text) {
        out.templates.push_back({std::move(source), std::move(where), TemplateEngine::llama_jinja, JinjaTemplateSource::text_alone,
                                 std::move(text), bos, eos});
    };
    const std::string jinja_path = folder + "/chat_template.jinja";
    if (fs::exists(jinja_path, ec)) {
        auto text = read_text_file(jinja_path, kMaxTemplateFileBytes);
        if (!text) return text.error();
        add("hub", "chat_template.jinja", std::move(text).value());
        return ok_status();
    }
    if (!config.contains("chat_template")) return ok_status();
    const json& t = config["chat_template"];
    if (t.is_string()) {
        add("hub", "tokenizer_config.json chat_template", t.get<std::string>());
    } else if (t.is_array()) {
        for (const json& named : t)
            if (named.is_object() && named.contains("name") && named["name"].is_string() && named.contains("template") &&
                named["template"].is_string())
                add("hub:" + named["name"].get<std::string>(), "tokenizer_config.json chat_template " + named["name"].get<std::string>(),
                    named["template"].get<std::string>());
    }
    return ok_status();
}

// The value llama.cpp reads for `key`: the stored one, or after the rewrite it is given (with the
// edit that gave it).
compat::KeyAfterRewrite key_for_llama(const Model& model, const std::optional<compat::LoadRewrite>& rewrite, const std::string& key) {
    if (rewrite) return compat::key_after(model, rewrite->plan.text, key);
    const MetadataEntry* e = model.find(key);
    return {e ? &e->value : nullptr, nullptr};
}

void add_gguf_templates(const Model& model, bool as_is, ModelTemplates& out) {
    const std::optional<compat::LoadRewrite> rewrite = as_is ? std::nullopt : compat::load_rewrite(model);
    auto add = [&](std::string source, const std::string& key, JinjaTemplateSource how) {
        const compat::KeyAfterRewrite after = key_for_llama(model, rewrite, key);
        if (!after.value || !after.value->is_string()) return;
        std::string where = key;
        if (after.edit) where += std::string(model.find(key) ? ", replaced" : ", added") + " by the compat rewrite (" + after.edit->rule + ")";
        out.templates.push_back({std::move(source), std::move(where), TemplateEngine::llama_jinja, how, after.value->string_value(kMaxTemplateFileBytes), "", ""});
    };
    const std::string key = "tokenizer.chat_template";
    add("gguf", key, JinjaTemplateSource::model);
    for (const MetadataEntry& e : model.metadata)
        if (e.key.starts_with(key + ".")) add("gguf:" + e.key.substr(key.size() + 1), e.key, JinjaTemplateSource::text_with_model);
}

}  // namespace

json default_conversation() {
    return {{"messages", json::array({{{"role", "system"}, {"content", "You are a helpful assistant."}},
                                      {{"role", "user"}, {"content", "What is in a GGUF file?"}}})},
            {"tools", json::array()},
            {"add_generation_prompt", true}};
}

Result<json> parse_conversation(const json& given) {
    json out = {{"messages", json::array()}, {"tools", json::array()}, {"add_generation_prompt", true}};
    if (given.is_array()) {
        out["messages"] = given;
    } else if (given.is_object()) {
        for (const auto& [key, value] : given.items())
            if (!allowed(key, {"messages", "tools", "add_generation_prompt"}))
                return usage("unknown field \"" + key + "\" in the conversation (messages, tools, add_generation_prompt)");
        if (!given.contains("messages") || !given["messages"].is_array()) return usage("the conversation needs a \"messages\" array");
        out["messages"] = given["messages"];
        if (given.contains("tools")) {
            if (!given["tools"].is_array()) return usage("\"tools\" must be an array");
            for (size_t i = 0; i < given["tools"].size(); ++i) {
                const json& tool = given["tools"][i];
                if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object() || !tool["function"].contains("name"))
                    return usage("tools[" + std::to_string(i) + "] needs a \"function\" object with a \"name\"");
            }
            out["tools"] = given["tools"];
        }
        if (given.contains("add_generation_prompt")) {
            if (!given["add_generation_prompt"].is_boolean()) return usage("\"add_generation_prompt\" must be true or false");
            out["add_generation_prompt"] = given["add_generation_prompt"];
        }
    } else {
        return usage("the conversation must be a JSON array of messages or an object with \"messages\"");
    }
    if (out["messages"].empty()) return usage("the conversation has no messages");
    for (size_t i = 0; i < out["messages"].size(); ++i)
        if (Status s = check_message(out["messages"][i], "messages[" + std::to_string(i) + "]"); !s) return s.error();
    return out;
}

Result<json> read_conversation(const std::string& path) {
    auto parsed = read_json_file(path);
    if (!parsed) return parsed.error();
    auto conversation = parse_conversation(*parsed);
    if (!conversation) {
        Error e = conversation.error();
        e.message = path + ": " + e.message;
        return e;
    }
    return conversation;
}

json ollama_conversation(const json& conversation) {
    std::map<std::string, std::string> call_names;  // tool_call_id -> function name
    json messages = json::array();
    for (const json& m : conversation["messages"]) {
        json o = {{"role", m["role"]}, {"content", m.contains("content") ? content_text(m["content"]) : ""}};
        if (m.contains("reasoning_content")) o["thinking"] = m["reasoning_content"];
        if (m.contains("tool_calls") && !m["tool_calls"].empty()) {
            json calls = json::array();
            for (const json& c : m["tool_calls"]) {
                const json& f = c["function"];
                json arguments = json::object();
                if (f.contains("arguments"))
                    arguments = f["arguments"].is_string() ? json::parse(f["arguments"].get<std::string>()) : f["arguments"];
                calls.push_back({{"function", {{"name", f["name"]}, {"arguments", arguments}}}});
                if (c.contains("id") && c["id"].is_string()) call_names[c["id"].get<std::string>()] = f["name"].get<std::string>();
            }
            o["tool_calls"] = calls;
        }
        if (m.contains("name"))
            o["tool_name"] = m["name"];
        else if (m.contains("tool_call_id") && call_names.count(m["tool_call_id"].get<std::string>()))
            o["tool_name"] = call_names[m["tool_call_id"].get<std::string>()];
        messages.push_back(std::move(o));
    }
    json out = {{"messages", messages}};
    if (!conversation["tools"].empty()) out["tools"] = conversation["tools"];
    return out;
}

Result<ModelTemplates> find_templates(const std::string& text, bool as_is) {
    const Target target = resolve(text);
    ModelTemplates out;
    out.model = text;
    out.kind = target_kind_name(target);
    switch (target.kind) {
        case TargetKind::model_file: {
            auto model = open_target(target);
            if (!model) return model.error();
            if (model->format == Format::gguf) {
                out.has_gguf = true;
                add_gguf_templates(*model, as_is, out);
            }
            return out;
        }
        case TargetKind::store_model: {
            auto model = open_target(target);
            if (!model) return model.error();
            auto view = view_manifest(*target.store, target.name, kMaxTemplateFileBytes);
            if (!view) return view.error();
            if (model->format == Format::gguf && view->format == "gguf") {
                out.has_gguf = true;
                add_gguf_templates(*model, as_is, out);
            }
            const LayerView* layer = nullptr;
            for (const LayerView& lv : view->layers)
                if (lv.layer.kind == LayerKind::template_text) layer = &lv;
            if (layer && layer->text)
                out.templates.push_back({"ollama", "TEMPLATE layer " + layer->layer.digest.substr(0, 19), TemplateEngine::ollama_go, JinjaTemplateSource::text_alone,
                                         layer->text->text, "", ""});
            else if (!layer)
                out.templates.push_back({"ollama:default", "Ollama's default template", TemplateEngine::ollama_go, JinjaTemplateSource::text_alone,
                                         "{{ .Prompt }}", "", ""});
            return out;
        }
        case TargetKind::safetensors_folder:
            if (Status s = add_hub_templates(target.path, out); !s) return s.error();
            return out;
        case TargetKind::missing:
        case TargetKind::not_a_model:
            return target.problem;
        default:
            return usage(text + " is " + out.kind + ", not one model: name a GGUF, an Ollama model or a safetensors folder");
    }
}

namespace {

struct Side {
    std::string name;  // "model", "against"
    ModelTemplates templates;
    WorkerSession* session = nullptr;  // the llama.cpp that renders and tokenizes its templates
    std::string session_model;  // the model that session loaded, as given
};

Result<std::unique_ptr<WorkerSession>> load_session(const std::string& text, const SessionOptions& base, JobContext* job) {
    SessionOptions options = base;
    options.vocab_only = true;
    return WorkerSession::load(text, options, job);
}

TemplateRendering render_one(const Side& side, const ModelTemplate& t, const json& conversation, bool add_generation_prompt) {
    TemplateRendering r;
    r.side = side.name;
    r.model = side.templates.model;
    r.tmpl = t;
    if (t.engine == TemplateEngine::ollama_go) {
        auto prompt = render_go_template(t.text, ollama_conversation(conversation));
        if (prompt) {
            r.rendered = true;
            r.prompt = std::move(prompt).value();
        } else {
            r.failure = template_failure(prompt.error().message, t.text);
        }
        return r;
    }
    json body = {{"messages", conversation["messages"]}};
    if (!conversation["tools"].empty()) body["tools"] = conversation["tools"];
    JinjaChatRequest request{body.dump(), t.jinja_source, t.jinja_source == JinjaTemplateSource::model ? "" : t.text, t.bos_token,
                             t.eos_token, add_generation_prompt};
    auto render = side.session->run<JinjaChatOp>(request);
    if (render) {
        r.rendered = true;
        r.prompt = render->prompt;
        r.chat = std::move(render).value();
    } else if (render.error().code == ErrorCode::E_TEMPLATE) {
        r.failure = template_failure(render.error().message, t.text);
    } else {
        r.failure = TemplateFailure{render.error().message, 0, 0};
    }
    return r;
}

}  // namespace

Result<TemplateLabResult> run_template_lab(const TemplateLabRequest& request, JobContext* job) {
    TemplateLabResult result;
    result.conversation = request.conversation ? *request.conversation : default_conversation();
    const bool add_generation_prompt = result.conversation.value("add_generation_prompt", true);

    std::vector<Side> sides;
    auto model = find_templates(request.model, request.session.as_is);
    if (!model) return model.error();
    sides.push_back({"model", std::move(model).value(), nullptr, ""});
    if (!request.against.empty()) {
        auto against = find_templates(request.against, request.session.as_is);
        if (!against) return against.error();
        sides.push_back({"against", std::move(against).value(), nullptr, ""});
    }
    std::vector<std::unique_ptr<WorkerSession>> sessions;
    for (Side& side : sides) {
        if (!side.templates.has_gguf) continue;
        auto session = load_session(side.templates.model, request.session, job);
        if (!session) return session.error();
        side.session = session->get();
        side.session_model = side.templates.model;
        sessions.push_back(std::move(session).value());
    }
    // A side without a GGUF renders and tokenizes with the other side's.
    for (Side& side : sides)
        if (!side.session)
            for (const Side& other : sides)
                if (other.session) {
                    side.session = other.session;
                    side.session_model = other.session_model;
                }
    for (const Side& side : sides)
        if (!side.session)
            return usage(side.templates.model + " has no GGUF to render and tokenize with: compare it with a GGUF (--against)");

    std::vector<int32_t> bos;
    size_t total = 0, done = 0;
    for (const Side& side : sides) total += side.templates.templates.size();
    for (const Side& side : sides) {
        for (const ModelTemplate& t : side.templates.templates) {
            if (job_cancelled(job)) return cancelled_error("template lab");
            TemplateRendering r = render_one(side, t, result.conversation, add_generation_prompt);
            if (r.rendered) {
                auto tokens = side.session->run<TokenizeOp>({r.prompt, TokenizeOptions{true, true}});
                if (!tokens) return tokens.error();
                r.tokens = std::move(tokens).value();
                r.tokenized_by = side.session_model;
            }
            bos.push_back(side.session->facts().bos);
            result.renderings.push_back(std::move(r));
            job_report(job, static_cast<double>(++done) / static_cast<double>(total));
        }
    }
    compare_renderings(result, bos, add_generation_prompt);
    return result;
}

}  // namespace mlens
