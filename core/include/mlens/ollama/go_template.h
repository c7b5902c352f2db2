// What Ollama reads from a model's Go template without running it (server/images.go
// Capabilities): the fields it names and the tags around thinking traces.
//
// Contract:
//  - The text is split into text and actions ({{ }}, with the {{- -}} trim markers; comments,
//    and string, raw-string and character literals inside actions, are skipped) and the actions
//    into a tree of if / range / with / else / end / define / block. parsed is false when the
//    nesting does not balance or an action is not closed; nothing else is then set.
//  - vars: the field identifiers of every action and pipeline (".Tools" → "tools", ".Function.Name"
//    → "function" and "name"), lower-cased, sorted, each once, as Ollama's Template.Vars. A
//    variable's fields ($.Tools, $m.Content) are not fields, as in Go's parse tree.
//  - thinking_open / thinking_close: Ollama's thinking.InferTags heuristic. Outside define and
//    block bodies, a .Thinking field whose nearest enclosing range ranges over .Messages takes
//    the first and the last node of the list that holds it, when they are text, trimmed of
//    whitespace; a later match overwrites an earlier one. Empty when none matches.
//  - Linear in the text; the tree's depth costs no stack beyond the nesting (at most
//    kMaxTemplateNesting levels, deeper is parsed = false).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mlens {

constexpr size_t kMaxTemplateNesting = 256;

struct GoTemplateFacts {
    bool parsed = false;
    std::vector<std::string> vars;
    std::string thinking_open, thinking_close;
};

GoTemplateFacts read_go_template(std::string_view text);

}  // namespace mlens
