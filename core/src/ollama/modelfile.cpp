#include "mlens/ollama/modelfile.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <map>

namespace mlens {

namespace {

bool has_triple_quote(std::string_view s) { return s.find("\"\"\"") != std::string_view::npos; }

std::string triple_quoted(std::string_view s) { return "\"\"\"" + std::string(s) + "\"\"\""; }

std::string parameter_value(const nlohmann::json& v) {
    if (!v.is_string()) return v.dump();
    const std::string s = v.get<std::string>();
    if (s.find('"') != std::string::npos || s.find('\n') != std::string::npos) return triple_quoted(s);
    return "\"" + s + "\"";
}

const char* text_keyword(LayerKind kind) {
    switch (kind) {
        case LayerKind::template_text:
            return "TEMPLATE";
        case LayerKind::system:
            return "SYSTEM";
        case LayerKind::license:
            return "LICENSE";
        default:
            return nullptr;
    }
}

// Ollama's Options fields that are lists: given once they are still a list.
bool list_parameter(const std::string& name) { return name == "stop"; }

nlohmann::ordered_json bare_value(const std::string& text) {
    nlohmann::ordered_json v = nlohmann::ordered_json::parse(text, nullptr, false);
    if (v.is_number() || v.is_boolean()) return v;
    return text;
}

}  // namespace

std::string write_modelfile(const ModelfileInput& input, std::vector<std::string>& notes) {
    std::string out = "FROM " + input.from + "\n";
    for (const std::string& a : input.adapters) out += "ADAPTER " + a + "\n";
    for (const ModelfileTextLayer& layer : input.layers) {
        if (const char* keyword = text_keyword(layer.kind)) {
            if (has_triple_quote(layer.text)) {
                notes.push_back(std::string(keyword) + " holds three quotes in a row, which a Modelfile cannot quote; left out");
                continue;
            }
            out += std::string(keyword) + " " + triple_quoted(layer.text) + "\n";
            continue;
        }
        nlohmann::json value = nlohmann::json::parse(layer.text, nullptr, false);
        if (layer.kind == LayerKind::params) {
            if (!value.is_object()) {
                notes.push_back("the params layer is not a JSON object; left out of the Modelfile");
                continue;
            }
            for (const auto& [name, v] : value.items()) {
                if (v.is_array())
                    for (const nlohmann::json& item : v) out += "PARAMETER " + name + " " + parameter_value(item) + "\n";
                else
                    out += "PARAMETER " + name + " " + parameter_value(v) + "\n";
            }
        } else if (layer.kind == LayerKind::messages) {
            bool good = value.is_array();
            for (const nlohmann::json& m : good ? value : nlohmann::json::array())
                good = good && m.is_object() && m.contains("role") && m["role"].is_string() && m.contains("content") &&
                    m["content"].is_string() && !has_triple_quote(m["content"].get<std::string>());
            if (!good) {
                notes.push_back("the messages layer is not a list of {role, content} Ollama writes; left out of the Modelfile");
                continue;
            }
            for (const nlohmann::json& m : value)
                out += "MESSAGE " + m["role"].get<std::string>() + " " + triple_quoted(m["content"].get<std::string>()) + "\n";
        }
    }
    return out;
}

Result<std::vector<ModelfileInstruction>> parse_modelfile(std::string_view text) {
    std::vector<ModelfileInstruction> out;
    size_t pos = 0, line = 1;
    auto error = [&](const std::string& message) {
        return Error{ErrorCode::E_MODELFILE, "line " + std::to_string(line), std::nullopt, message};
    };
    auto skip_blanks = [&] {
        while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    };
    auto word = [&] {
        size_t start = pos;
        while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
        return std::string(text.substr(start, pos - start));
    };
    while (pos < text.size()) {
        if (text[pos] == '\n') {
            ++pos;
            ++line;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(text[pos]))) {
            ++pos;
            continue;
        }
        if (text[pos] == '#') {
            while (pos < text.size() && text[pos] != '\n') ++pos;
            continue;
        }
        ModelfileInstruction ins;
        ins.keyword = word();
        for (char& c : ins.keyword) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        static const char* kKeywords[] = {"FROM", "ADAPTER", "TEMPLATE", "SYSTEM", "PARAMETER", "MESSAGE", "LICENSE"};
        bool known = false;
        for (const char* k : kKeywords) known = known || ins.keyword == k;
        if (!known) return error("unknown instruction \"" + ins.keyword + "\"");
        skip_blanks();
        if (ins.keyword == "PARAMETER" || ins.keyword == "MESSAGE") {
            ins.name = word();
            skip_blanks();
        }
        if (text.substr(pos, 3) == "\"\"\"") {
            size_t close = text.find("\"\"\"", pos + 3);
            if (close == std::string_view::npos) return error("a \"\"\" quote is not closed");
            while (close + 3 < text.size() && text[close + 3] == '"') ++close;
            ins.value = std::string(text.substr(pos + 3, close - pos - 3));
            for (char c : ins.value) line += c == '\n';
            pos = close + 3;
            ins.quoted = true;
        } else if (pos < text.size() && text[pos] == '"') {
            size_t close = text.find('"', pos + 1);
            if (close == std::string_view::npos || text.substr(pos, close - pos).find('\n') != std::string_view::npos)
                return error("a \" quote is not closed on its line");
            ins.value = std::string(text.substr(pos + 1, close - pos - 1));
            pos = close + 1;
            ins.quoted = true;
        } else {
            size_t end = text.find('\n', pos);
            if (end == std::string_view::npos) end = text.size();
            ins.value = std::string(text.substr(pos, end - pos));
            while (!ins.value.empty() && std::isspace(static_cast<unsigned char>(ins.value.back()))) ins.value.pop_back();
            pos = end;
        }
        if ((ins.keyword == "PARAMETER" || ins.keyword == "MESSAGE") && ins.name.empty())
            return error(ins.keyword + " needs a name and a value");
        out.push_back(std::move(ins));
    }
    return out;
}

std::vector<ModelfileTextLayer> modelfile_layers(const std::vector<ModelfileInstruction>& instructions) {
    std::vector<ModelfileTextLayer> layers;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    std::optional<size_t> params_at, messages_at;
    for (const ModelfileInstruction& ins : instructions) {
        if (ins.keyword == "TEMPLATE")
            layers.push_back({LayerKind::template_text, ins.value});
        else if (ins.keyword == "SYSTEM")
            layers.push_back({LayerKind::system, ins.value});
        else if (ins.keyword == "LICENSE")
            layers.push_back({LayerKind::license, ins.value});
        else if (ins.keyword == "PARAMETER") {
            if (!params_at) {
                params_at = layers.size();
                layers.push_back({LayerKind::params, ""});
            }
            nlohmann::ordered_json v = ins.quoted ? nlohmann::ordered_json(ins.value) : bare_value(ins.value);
            if (params.contains(ins.name)) {
                if (!params[ins.name].is_array()) params[ins.name] = nlohmann::ordered_json::array({params[ins.name]});
                params[ins.name].push_back(v);
            } else {
                params[ins.name] = list_parameter(ins.name) ? nlohmann::ordered_json::array({v}) : nlohmann::ordered_json(v);
            }
        } else if (ins.keyword == "MESSAGE") {
            if (!messages_at) {
                messages_at = layers.size();
                layers.push_back({LayerKind::messages, ""});
            }
            messages.push_back({{"role", ins.name}, {"content", ins.value}});
        }
    }
    if (params_at) layers[*params_at].text = params.dump();
    if (messages_at) layers[*messages_at].text = messages.dump();
    return layers;
}

bool same_layer_content(LayerKind kind, std::string_view a, std::string_view b) {
    if (kind != LayerKind::params && kind != LayerKind::messages) return a == b;
    nlohmann::json ja = nlohmann::json::parse(a, nullptr, false), jb = nlohmann::json::parse(b, nullptr, false);
    return !ja.is_discarded() && ja == jb;
}

}  // namespace mlens
