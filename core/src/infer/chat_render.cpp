#include "mlens/infer/chat_render.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <tuple>

namespace mlens {

namespace {

// The line and column (1-based) of byte `pos` of `source`.
std::pair<uint32_t, uint32_t> line_column(const std::string& source, size_t pos) {
    uint32_t line = 1, column = 1;
    for (size_t i = 0; i < pos && i < source.size(); ++i) {
        if (source[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

// The engine's lexer and parser errors end with its source excerpt and a caret under the position
// (common/jinja/utils.h peak_source): "...<up to 40 bytes before and after, newlines as ↵>...\n"
// then spaces and "^". The excerpt is found again in the source to give the position's line.
std::optional<size_t> excerpt_position(const std::string& message, const std::string& source) {
    const size_t caret_line = message.rfind('\n');
    if (caret_line == std::string::npos || message.empty() || message.back() != '^') return std::nullopt;
    const size_t excerpt_line = message.rfind('\n', caret_line - 1);
    const size_t start = excerpt_line == std::string::npos ? 0 : excerpt_line + 1;
    std::string excerpt = message.substr(start, caret_line - start);
    if (excerpt.size() < 6 || !excerpt.starts_with("...") || !excerpt.ends_with("...")) return std::nullopt;
    const size_t caret = message.size() - 1 - (caret_line + 1);  // columns before the caret
    if (caret < 3) return std::nullopt;
    // The excerpt as it was in the source (each ↵ was a newline); the caret stands `caret - 3`
    // source bytes after the excerpt's first.
    std::string text;
    for (size_t i = 3; i < excerpt.size() - 3;) {
        const bool newline = excerpt.compare(i, 3, "\xE2\x86\xB5") == 0;
        text += newline ? '\n' : excerpt[i];
        i += newline ? 3 : 1;
    }
    const size_t found = source.find(text);
    if (found == std::string::npos || source.find(text, found + 1) != std::string::npos) return std::nullopt;
    return found + std::min(caret - 3, text.size());
}

}  // namespace

TemplateFailure template_failure(const std::string& message, const std::string& source) {
    TemplateFailure failure{message, 0, 0};
    static const std::regex kLineColumn("line ([0-9]+), column ([0-9]+)");
    static const std::regex kLine("\\(line ([0-9]+)\\)$");
    std::smatch m;
    if (std::regex_search(message, m, kLineColumn)) {
        failure.line = static_cast<uint32_t>(std::stoul(m[1].str()));
        failure.column = static_cast<uint32_t>(std::stoul(m[2].str()));
    } else if (std::regex_search(message, m, kLine)) {
        failure.line = static_cast<uint32_t>(std::stoul(m[1].str()));
    } else if (auto pos = excerpt_position(message, source)) {
        std::tie(failure.line, failure.column) = line_column(source, *pos);
    }
    return failure;
}

}  // namespace mlens
