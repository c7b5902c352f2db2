#include "mlens/ollama/modelfile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "mlens/text/escape.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

constexpr std::string_view kTriple = "\"\"\"";

bool is_line_break(char c) { return c == '\n' || c == '\r'; }
bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_parameter_char(char c) { return is_alpha(c) || (c >= '0' && c <= '9') || c == '_'; }

// What Go's strings.TrimSpace removes, among the characters a value can still hold.
std::string_view trim_space(std::string_view s) {
    auto space = [](char c) { return is_blank(c) || is_line_break(c); };
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
    return s;
}

// Ollama's unquote: """text""" and "text" lose their quotes; an unclosed quote is nullopt.
std::optional<std::string_view> unquote(std::string_view s) {
    if (s.starts_with(kTriple)) {
        if (s.size() >= 6 && s.ends_with(kTriple)) return s.substr(3, s.size() - 6);
        return std::nullopt;
    }
    if (s.starts_with('"')) {
        if (s.size() >= 2 && s.ends_with('"')) return s.substr(1, s.size() - 2);
        return std::nullopt;
    }
    return s;
}

// Code points Ollama's parser does not keep in a value: it adds a character only when Go's
// strconv.IsPrint holds or it is a blank or line break. Approximated by the controls, the
// invisible format characters, the spaces other than U+0020, private use and noncharacters;
// unassigned code points are not recognised.
bool dropped_by_ollama(uint32_t cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r') return false;
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return true;
    if (is_invisible_format(cp)) return true;
    if (cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F || cp == 0x3000) return true;
    if ((cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000) return true;
    return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

// Why `text` cannot be written so that Ollama reads it back unchanged, or "" when it can.
std::string unreadable_character(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        const size_t len = utf8_decode(text.substr(i), cp);
        if (len == 0) return "holds bytes that are not UTF-8, which Ollama's Modelfile parser replaces";
        if (dropped_by_ollama(cp))
            return "holds " + escape_for_display(text.substr(i, len)) + ", which Ollama's Modelfile parser drops";
        i += len;
    }
    return "";
}

// Whether """value""" would end early: Ollama's parser ends a value at the first line break
// after which the text read so far, trimmed, reads as complete, which for a """ quote is a line
// whose text (trailing blanks aside) ends in three quotes.
bool ends_early_in_triple_quotes(std::string_view value) {
    size_t kept = 0;  // length of the text so far without its trailing blanks and line breaks
    for (size_t i = 0; i < value.size(); ++i) {
        if (is_line_break(value[i]) && kept >= 3 && value.substr(kept - 3, 3) == kTriple) return true;
        if (!is_blank(value[i]) && !is_line_break(value[i])) kept = i + 1;
    }
    return false;
}

// How a value may be written: bare when safe (paths), "text" when it is one line without quotes
// (parameter strings), or always in triple quotes (texts and messages, as Ollama writes them).
enum class Quoting { bare_allowed, quoted, triple };

// The argument text for `value` in the form Ollama's parser reads back as exactly `value`.
Result<std::string> argument(std::string_view value, Quoting quoting, const std::string& what) {
    auto refuse = [&](const std::string& why) {
        return Error{ErrorCode::E_MODELFILE, what, std::nullopt, what + " " + why + "; no Modelfile can carry it"};
    };
    const std::string bad = unreadable_character(value);
    if (!bad.empty()) return refuse(bad);
    const bool one_line = value.find_first_of("\r\n") == std::string_view::npos;
    if (quoting == Quoting::bare_allowed && one_line && !value.empty() && trim_space(value) == value && !value.starts_with('"'))
        return std::string(value);
    if (quoting != Quoting::triple && one_line && value.find('"') == std::string_view::npos) return "\"" + std::string(value) + "\"";
    if (ends_early_in_triple_quotes(value))
        return refuse("has a line ending in three quotes followed by more text, which ends a \"\"\" quote early");
    return std::string(kTriple) + std::string(value) + std::string(kTriple);
}

const char* text_keyword(LayerKind kind) {
    static constexpr NameRow<LayerKind> kNames[] = {
        {LayerKind::template_text, "TEMPLATE"}, {LayerKind::system, "SYSTEM"}, {LayerKind::license, "LICENSE"}};
    return name_of(kNames, kind, nullptr);
}

// Ollama's Options fields that are lists: given once they are still a list.
bool list_parameter(const std::string& name) { return name == "stop"; }

nlohmann::ordered_json bare_value(const std::string& text) {
    nlohmann::ordered_json v = nlohmann::ordered_json::parse(text, nullptr, false);
    if (v.is_number() || v.is_boolean()) return v;
    return text;
}

Error layer_error(const std::string& layer, const std::string& message) {
    return Error{ErrorCode::E_MODELFILE, layer, std::nullopt, "the " + layer + " layer " + message};
}

Status add_parameter(std::string& out, const std::string& name, const nlohmann::json& v) {
    const std::string what = "PARAMETER " + escape_for_display(name);
    if (!v.is_string() && !v.is_number() && !v.is_boolean())
        return layer_error("params", "holds " + what + " with a value that is not a string, number or boolean");
    auto arg = v.is_string() ? argument(v.get<std::string>(), Quoting::quoted, what) : Result<std::string>(v.dump());
    if (!arg) return arg.error();
    out += "PARAMETER " + name + " " + *arg + "\n";
    return ok_status();
}

Status add_parameters(std::string& out, std::string_view text) {
    const nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
    if (!value.is_object()) return layer_error("params", "is not a JSON object");
    for (const auto& [name, v] : value.items()) {
        if (name.empty() || !std::all_of(name.begin(), name.end(), is_parameter_char))
            return layer_error("params", "has the name \"" + escape_for_display(name) + "\", which a PARAMETER line cannot spell");
        if (!v.is_array()) {
            Status st = add_parameter(out, name, v);
            if (!st) return st;
            continue;
        }
        for (const nlohmann::json& item : v) {
            Status st = add_parameter(out, name, item);
            if (!st) return st;
        }
    }
    return ok_status();
}

bool is_message_role(const std::string& role) { return role == "system" || role == "user" || role == "assistant"; }

Status add_messages(std::string& out, std::string_view text) {
    const nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
    if (!value.is_array()) return layer_error("messages", "is not a JSON array");
    for (const nlohmann::json& m : value) {
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") || !m["content"].is_string())
            return layer_error("messages", "holds an entry that is not {role, content} text");
        const std::string role = m["role"].get<std::string>();
        if (!is_message_role(role))
            return layer_error("messages", "has the role \"" + escape_for_display(role) + "\"; a MESSAGE is from system, user or assistant");
        auto arg = argument(m["content"].get<std::string>(), Quoting::triple, "MESSAGE " + role);
        if (!arg) return arg.error();
        out += "MESSAGE " + role + " " + *arg + "\n";
    }
    return ok_status();
}

}  // namespace

Result<std::string> write_modelfile(const ModelfileInput& input) {
    auto from = argument(input.from, Quoting::bare_allowed, "FROM");
    if (!from) return from.error();
    std::string out = "FROM " + *from + "\n";
    for (const std::string& a : input.adapters) {
        auto arg = argument(a, Quoting::bare_allowed, "ADAPTER");
        if (!arg) return arg.error();
        out += "ADAPTER " + *arg + "\n";
    }
    for (const ModelfileTextLayer& layer : input.layers) {
        if (const char* keyword = text_keyword(layer.kind)) {
            auto arg = argument(layer.text, Quoting::triple, keyword);
            if (!arg) return arg.error();
            out += std::string(keyword) + " " + *arg + "\n";
        } else if (layer.kind == LayerKind::params) {
            Status st = add_parameters(out, layer.text);
            if (!st) return st.error();
        } else if (layer.kind == LayerKind::messages) {
            Status st = add_messages(out, layer.text);
            if (!st) return st.error();
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
    // A run of characters accepted by `accept`, which must end at a blank.
    auto word = [&](bool (*accept)(char), const char* what) -> Result<std::string> {
        const size_t start = pos;
        while (pos < text.size() && accept(text[pos])) ++pos;
        if (pos == text.size() || !is_blank(text[pos])) return error(std::string(what) + " must be followed by a blank");
        std::string w(text.substr(start, pos - start));
        ++pos;
        return w;
    };
    static const char* const kKeywords[] = {"FROM",   "ADAPTER",  "TEMPLATE", "SYSTEM", "PARAMETER", "MESSAGE",
                                            "LICENSE", "DRAFT",    "RENDERER", "PARSER", "REQUIRES"};
    while (pos < text.size()) {
        const char c = text[pos];
        if (c == '\n') ++line;
        if (is_blank(c) || is_line_break(c)) {
            ++pos;
            continue;
        }
        if (c == '#') {
            while (pos < text.size() && !is_line_break(text[pos])) ++pos;
            continue;
        }
        ModelfileInstruction ins;
        ++pos;  // the first character of an instruction is taken as it is, as Ollama does
        auto rest = word(is_alpha, "an instruction");
        if (!rest) return rest.error();
        ins.keyword = std::string(1, c) + *rest;
        for (char& k : ins.keyword) k = static_cast<char>(std::toupper(static_cast<unsigned char>(k)));
        if (std::none_of(std::begin(kKeywords), std::end(kKeywords), [&](const char* k) { return ins.keyword == k; }))
            return error("unknown instruction \"" + escape_for_display(ins.keyword) + "\"");
        if (ins.keyword == "PARAMETER" || ins.keyword == "MESSAGE") {
            auto name = word(ins.keyword == "PARAMETER" ? is_parameter_char : is_alpha, "a name");
            if (!name) return name.error();
            if (name->empty()) return error(ins.keyword + " needs a name and a value");
            if (ins.keyword == "MESSAGE" && !is_message_role(*name)) return error("a MESSAGE role is system, user or assistant");
            ins.name = std::move(*name);
        }
        // The value runs to the first line break at which it reads as complete (unquote).
        std::string value;
        std::optional<std::string_view> done;
        while (pos < text.size()) {
            const char v = text[pos];
            if (is_line_break(v) && (done = unquote(trim_space(value)))) break;
            if (v == '\n') ++line;
            uint32_t cp = 0;
            const size_t len = utf8_decode(text.substr(pos), cp);
            if (len == 0)
                value += "\xEF\xBF\xBD";  // Go reads a byte that starts no character as U+FFFD
            else if (!dropped_by_ollama(cp))
                value.append(text.substr(pos, len));
            pos += len == 0 ? 1 : len;
        }
        if (!done) done = unquote(trim_space(value));
        if (!done) return error("a quote is not closed");
        const std::string_view trimmed = trim_space(value);
        ins.quoted = trimmed.starts_with('"');
        ins.value = std::string(*done);
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
