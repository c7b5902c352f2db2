#include "mlens/ollama/go_template.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace mlens {

namespace {

using FieldChain = std::vector<std::string>;

struct Node;
using NodeList = std::vector<std::unique_ptr<Node>>;

// Text, an action ({{ .X }}, {{ template "t" . }}), or a block (if / range / with / define /
// block) with its body and else lists; `fields` are those of the action's or block's pipeline.
struct Node {
    enum class Kind { text, action, block } kind = Kind::text;
    std::string text;
    std::vector<FieldChain> fields;
    std::string keyword;
    std::vector<NodeList> lists;
};

bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_start(char c) { return is_ident_char(c) && !(c >= '0' && c <= '9'); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// Past the literal that starts at s[i] (", ` or '), or npos when it is not closed.
size_t skip_literal(std::string_view s, size_t i) {
    const char quote = s[i];
    for (++i; i < s.size(); ++i) {
        if (quote != '`' && s[i] == '\\')
            ++i;
        else if (s[i] == quote)
            return i + 1;
    }
    return std::string_view::npos;
}

// The field chains of a pipeline: ".A.B" not preceded by an identifier, '$', ')' or '.'.
std::vector<FieldChain> fields_of(std::string_view pipe) {
    std::vector<FieldChain> out;
    for (size_t i = 0; i < pipe.size();) {
        const char c = pipe[i];
        if (c == '"' || c == '`' || c == '\'') {
            i = skip_literal(pipe, i);
            if (i == std::string_view::npos) break;
            continue;
        }
        const bool field_start = c == '.' && i + 1 < pipe.size() && is_ident_start(pipe[i + 1]) &&
            (i == 0 || !(is_ident_char(pipe[i - 1]) || pipe[i - 1] == '$' || pipe[i - 1] == ')' || pipe[i - 1] == '.'));
        if (!field_start) {
            // A variable's or a result's chain is skipped whole.
            if (c == '$' || c == ')' || is_ident_char(c)) {
                ++i;
                while (i < pipe.size() &&
                       (is_ident_char(pipe[i]) || (pipe[i] == '.' && i + 1 < pipe.size() && is_ident_start(pipe[i + 1]))))
                    ++i;
            } else {
                ++i;
            }
            continue;
        }
        FieldChain chain;
        while (i < pipe.size() && pipe[i] == '.' && i + 1 < pipe.size() && is_ident_start(pipe[i + 1])) {
            size_t end = i + 1;
            while (end < pipe.size() && is_ident_char(pipe[end])) ++end;
            chain.emplace_back(pipe.substr(i + 1, end - i - 1));
            i = end;
        }
        out.push_back(std::move(chain));
    }
    return out;
}

struct Action {
    std::string_view body;  // between the delimiters and trim markers
    bool trim_before = false, trim_after = false;
    size_t end = 0;  // past "}}"
};

// The action starting at s[at] == "{{", or nullopt when it is not closed.
std::optional<Action> read_action(std::string_view s, size_t at) {
    Action a;
    size_t i = at + 2;
    if (i + 1 < s.size() && s[i] == '-' && is_space(s[i + 1])) {
        a.trim_before = true;
        i += 2;
    }
    const size_t start = i;
    if (s.substr(i).starts_with("/*")) {
        size_t close = s.find("*/", i + 2);
        if (close == std::string_view::npos) return std::nullopt;
        i = close + 2;
    }
    while (i < s.size()) {
        const char c = s[i];
        if (c == '"' || c == '`' || c == '\'') {
            i = skip_literal(s, i);
            if (i == std::string_view::npos) return std::nullopt;
            continue;
        }
        if (s.substr(i).starts_with(" -}}") || s.substr(i).starts_with("\n-}}") || s.substr(i).starts_with("\t-}}")) {
            a.trim_after = true;
            a.body = s.substr(start, i - start);
            a.end = i + 4;
            return a;
        }
        if (s.substr(i).starts_with("}}")) {
            a.body = s.substr(start, i - start);
            a.end = i + 2;
            return a;
        }
        ++i;
    }
    return std::nullopt;
}

std::string_view first_word(std::string_view body) {
    size_t end = 0;
    while (end < body.size() && is_ident_char(body[end])) ++end;
    return body.substr(0, end);
}

struct Open {
    Node* block;  // nullptr: the template's root
    bool implicit;  // opened by "else if" / "else with": closed by the same end
};

// Builds the tree; false when it does not balance.
bool parse(std::string_view s, NodeList& root) {
    std::vector<Open> open = {{nullptr, false}};
    auto current = [&]() -> NodeList& { return open.back().block ? open.back().block->lists.back() : root; };
    std::string pending_text;
    auto flush_text = [&](bool trim_end) {
        std::string_view t = pending_text;
        if (trim_end)
            while (!t.empty() && is_space(t.back())) t.remove_suffix(1);
        if (!t.empty()) {
            auto n = std::make_unique<Node>();
            n->text = std::string(t);
            current().push_back(std::move(n));
        }
        pending_text.clear();
    };
    auto open_block = [&](std::string_view keyword, std::string_view pipe, bool implicit) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::block;
        n->keyword = std::string(keyword);
        n->fields = fields_of(pipe);
        n->lists.emplace_back();
        Node* raw = n.get();
        current().push_back(std::move(n));
        open.push_back({raw, implicit});
        return open.size() <= kMaxTemplateNesting;
    };
    size_t i = 0;
    bool trim_next = false;
    while (i < s.size()) {
        size_t at = s.find("{{", i);
        std::string_view text = s.substr(i, at == std::string_view::npos ? std::string_view::npos : at - i);
        if (trim_next)
            while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
        pending_text += text;
        if (at == std::string_view::npos) break;
        std::optional<Action> a = read_action(s, at);
        if (!a) return false;
        flush_text(a->trim_before);
        trim_next = a->trim_after;
        i = a->end;
        std::string_view body = trim(a->body);
        if (body.starts_with("/*")) continue;
        std::string_view word = first_word(body);
        std::string_view rest = body.substr(word.size());
        if (word == "if" || word == "range" || word == "with" || word == "define" || word == "block") {
            if (!open_block(word, rest, false)) return false;
        } else if (word == "else") {
            if (!open.back().block || open.back().block->keyword == "define" || open.back().block->keyword == "block") return false;
            open.back().block->lists.emplace_back();
            std::string_view chained = trim(rest);
            std::string_view chained_word = first_word(chained);
            if ((chained_word == "if" || chained_word == "with") && !open_block(chained_word, chained.substr(chained_word.size()), true))
                return false;
        } else if (word == "end") {
            bool implicit = true;
            while (implicit) {
                if (open.size() < 2) return false;
                implicit = open.back().implicit;
                open.pop_back();
            }
        } else if (word != "break" && word != "continue") {
            auto n = std::make_unique<Node>();
            n->kind = Node::Kind::action;
            n->fields = fields_of(word == "template" ? rest : body);
            current().push_back(std::move(n));
        }
    }
    flush_text(false);
    return open.size() == 1;
}

void collect_vars(const NodeList& list, std::vector<std::string>& vars) {
    for (const auto& n : list) {
        for (const FieldChain& chain : n->fields)
            for (const std::string& ident : chain) vars.push_back(ident);
        for (const NodeList& inner : n->lists) collect_vars(inner, vars);
    }
}

bool uses_field(const Node& n, std::string_view name) {
    return std::any_of(n.fields.begin(), n.fields.end(), [&](const FieldChain& c) { return !c.empty() && c[0] == name; });
}

void infer_tags(const NodeList& list, std::vector<const Node*>& ranges, GoTemplateFacts& facts) {
    for (const auto& n : list) {
        if (n->kind == Node::Kind::block && (n->keyword == "define" || n->keyword == "block")) continue;
        const bool is_range = n->kind == Node::Kind::block && n->keyword == "range";
        if (is_range) ranges.push_back(n.get());
        if (uses_field(*n, "Thinking") && !ranges.empty() && uses_field(*ranges.back(), "Messages")) {
            if (list.front()->kind == Node::Kind::text) facts.thinking_open = std::string(trim(list.front()->text));
            if (list.back()->kind == Node::Kind::text) facts.thinking_close = std::string(trim(list.back()->text));
        }
        for (const NodeList& inner : n->lists) infer_tags(inner, ranges, facts);
        if (is_range) ranges.pop_back();
    }
}

}  // namespace

GoTemplateFacts read_go_template(std::string_view text) {
    GoTemplateFacts facts;
    NodeList root;
    if (!parse(text, root)) return facts;
    facts.parsed = true;
    collect_vars(root, facts.vars);
    for (std::string& v : facts.vars)
        for (char& c : v)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    std::sort(facts.vars.begin(), facts.vars.end());
    facts.vars.erase(std::unique(facts.vars.begin(), facts.vars.end()), facts.vars.end());
    std::vector<const Node*> ranges;
    infer_tags(root, ranges, facts);
    return facts;
}

}  // namespace mlens
