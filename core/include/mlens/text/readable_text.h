// Text from a file made readable: the one formatter behind every view of a text layer (template,
// system, license, params, messages, JSON files) in the command line tool and the app.
//
// Contract:
//  - readable_text keeps line breaks and tabs (CR LF and a lone CR become LF) and escapes only
//    what escape_for_display escapes otherwise: other control characters and invalid bytes as
//    \xNN, invisible format characters as \uNNNN (escape.h). The result is valid UTF-8 and holds at most max_chars code
//    points of the input, followed by "…" when it was cut.
//  - pretty_json re-indents one JSON value (object, array or scalar) with two spaces per level,
//    one member or element per line, empty containers as {} and []. Inside strings, \uXXXX
//    escapes (surrogate pairs included) and \/ become the characters they name (\u0022 and \u005C
//    as \" and \\, the only way JSON writes them), except control characters, invisible format
//    characters (escape.h) and lone surrogates, which stay escaped (\n, \t, \u0007, \u202E, \uD800). nullopt when the text is not one well-formed JSON value (invalid UTF-8 included)
//    or nests deeper than kMaxPrettyJsonDepth (max_json_depth, as for every JSON ModelLens
//    reads). Indentation stops growing after kMaxPrettyJsonIndent levels, so the result is at
//    most about 2 × kMaxPrettyJsonIndent + 2 bytes per input byte. Nesting costs no stack.
//  - readable_json is pretty_json passed through readable_text, else readable_text of the text
//    as it is.
//  - first_lines splits readable text into its first `lines` lines (trailing blank lines of that
//    head dropped) and counts the lines left out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mlens {

constexpr size_t kMaxPrettyJsonDepth = 128;
constexpr size_t kMaxPrettyJsonIndent = 32;

std::string readable_text(std::string_view text, size_t max_chars = 4000);
std::optional<std::string> pretty_json(std::string_view text);
std::string readable_json(std::string_view text, size_t max_chars = 4000);

struct TextHead {
    std::string text;  // the first lines, joined by LF
    size_t more_lines = 0;  // lines after them
};

TextHead first_lines(std::string_view text, size_t lines);

}  // namespace mlens
