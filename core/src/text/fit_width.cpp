#include "mlens/text/fit_width.h"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "mlens/text/display_width.h"
#include "mlens/text/utf8.h"

namespace mlens {

namespace {

struct CodePoint {
    size_t begin = 0, size = 0;
    size_t width = 0;
};

std::vector<CodePoint> code_points(std::string_view text) {
    std::vector<CodePoint> out;
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        const size_t n = utf8_decode(text.substr(i), cp);
        // An invalid byte takes one column, as display_width counts it.
        out.push_back({i, n ? n : 1, n ? static_cast<size_t>(code_point_width(cp)) : 1});
        i += n ? n : 1;
    }
    return out;
}

bool joins_parts(std::string_view text, const CodePoint& c) {
    if (c.size != 1) return false;
    const char ch = text[c.begin];
    return ch == '.' || ch == '_' || ch == '/' || ch == '-' || ch == ':' || ch == ',' || ch == '=';
}

// A number as text prints one: digits with a point or separators, after an optional sign or
// opening bracket ("2.36", "(4", "-0.5", "12,345").
bool is_number_word(std::string_view word) {
    const size_t start = word.find_first_not_of("([~+-");
    if (start == std::string_view::npos || !std::isdigit(static_cast<unsigned char>(word[start]))) return false;
    return word.find_first_not_of("0123456789.,", start) == std::string_view::npos;
}

// A unit a number is printed with (number_format.h: sizes, memory, counts; seconds), before any
// closing punctuation ("MB)", "GiB,").
bool is_unit_word(std::string_view word) {
    static constexpr std::string_view kUnits[] = {"B",   "kB",  "KB",  "MB", "GB", "TB", "PB",    "KiB", "MiB",
                                                  "GiB", "TiB", "PiB", "K",  "M",  "T",  "bytes", "ms",  "s"};
    const size_t end = word.find_last_not_of(")],;:.");
    if (end == std::string_view::npos) return false;
    return std::find(std::begin(kUnits), std::end(kUnits), word.substr(0, end + 1)) != std::end(kUnits);
}

// Where a continuation of `line` starts: the column of its description when the line is a term
// and a description apart by two or more spaces ("  info    Format, ..."), the description
// starting within the first half of `width`; a line indented by more than eight columns (itself
// the continuation of an item above it) at its indent; else at its indent plus two.
size_t hanging_indent(std::string_view line, size_t indent, size_t width) {
    const size_t gap = line.find("  ", indent);
    if (gap != std::string_view::npos) {
        const size_t description = line.find_first_not_of(' ', gap);
        if (description != std::string_view::npos) {
            const size_t column = display_width(line.substr(0, description));
            if (column <= width / 2) return column;
        }
    }
    return indent > 8 ? indent : indent + 2;
}

}  // namespace

std::vector<std::string> wrap_words(std::string_view line, size_t width) {
    if (display_width(line) <= width) return {std::string(line)};
    const size_t indent = line.find_first_not_of(' ') == std::string_view::npos ? line.size() : line.find_first_not_of(' ');
    const std::string hanging(hanging_indent(line, indent, width), ' ');
    std::vector<std::string> out;
    std::string piece(line.substr(0, indent));
    size_t piece_width = indent;
    bool piece_has_word = false;
    for (size_t i = indent; i < line.size();) {
        size_t end = std::min(line.find(' ', i), line.size());
        // A number and the unit after it are one word: a break never parts them.
        if (const size_t next = line.find_first_not_of(' ', end);
            next != std::string_view::npos && is_number_word(line.substr(i, end - i))) {
            const size_t next_end = std::min(line.find(' ', next), line.size());
            if (is_unit_word(line.substr(next, next_end - next))) end = next_end;
        }
        const std::string_view word = line.substr(i, end - i);
        const size_t word_width = display_width(word);
        // The spaces before this word as the line has them, unless the word starts a piece.
        const size_t spaces = piece_has_word ? i - line.find_last_not_of(' ', i - 1) - 1 : 0;
        if (piece_has_word && piece_width + spaces + word_width > width) {
            out.push_back(std::move(piece));
            piece = hanging;
            piece_width = hanging.size();
            piece_has_word = false;
        }
        if (piece_has_word) {
            piece.append(spaces, ' ');
            piece_width += spaces;
        }
        piece += word;
        piece_width += word_width;
        piece_has_word = true;
        i = line.find_first_not_of(' ', end);
        if (i == std::string_view::npos) break;
    }
    if (piece_has_word) out.push_back(std::move(piece));
    return out;
}

std::vector<std::string> break_cell(std::string_view text, size_t width) {
    if (width == 0 || display_width(text) <= width) return {std::string(text)};
    // Leading spaces indent the cell (a row under its group): every piece keeps them.
    const size_t indent = std::min(text.find_first_not_of(' '), text.size());
    if (indent > 0 && indent < width / 2) {
        std::vector<std::string> out = break_cell(text.substr(indent), width - indent);
        for (std::string& piece : out) piece.insert(0, indent, ' ');
        return out;
    }
    const std::vector<CodePoint> cps = code_points(text);
    auto is_space = [&](size_t i) { return cps[i].size == 1 && text[cps[i].begin] == ' '; };
    std::vector<std::string> out;
    size_t start = 0;
    while (start < cps.size()) {
        // The code points [start, end) fit; a character wider than the column goes alone.
        size_t end = start, used = 0;
        while (end < cps.size() && used + cps[end].width <= width) used += cps[end++].width;
        if (end == start) end = start + 1;
        size_t cut = end, next = end;
        if (end < cps.size() && is_space(end)) {
            next = end + 1;
        } else if (end < cps.size()) {
            bool found = false;
            for (size_t i = end - 1; i > start && !found; --i)
                if (is_space(i)) {
                    cut = i;
                    next = i + 1;
                    found = true;
                }
            for (size_t i = end; i > start + 1 && !found; --i)
                if (joins_parts(text, cps[i - 1])) {
                    cut = next = i;
                    found = true;
                }
        }
        const size_t to = cut < cps.size() ? cps[cut].begin : text.size();
        out.emplace_back(text.substr(cps[start].begin, to - cps[start].begin));
        start = next;
        while (start < cps.size() && is_space(start)) ++start;
    }
    return out;
}

std::vector<std::string> wrap_command(std::string_view line, size_t width) {
    if (display_width(line) <= width) return {std::string(line)};
    const size_t indent = std::min(line.find_first_not_of(' '), line.size());
    // The words, a quoted one whole, then each option joined with its value.
    std::vector<std::string> words;
    bool quoted = false;
    for (size_t i = indent; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '\'') quoted = !quoted;
        if (c == ' ' && !quoted) {
            if (i > indent && line[i - 1] != ' ') words.emplace_back();
            continue;
        }
        if (words.empty()) words.emplace_back();
        words.back() += c;
    }
    if (!words.empty() && words.back().empty()) words.pop_back();
    std::vector<std::string> units;
    for (size_t i = 0; i < words.size(); ++i) {
        if (words[i].starts_with("--") && i + 1 < words.size() && !words[i + 1].starts_with("-")) {
            units.push_back(words[i] + ' ' + words[i + 1]);
            ++i;
        } else {
            units.push_back(words[i]);
        }
    }
    const std::string continued(indent + 4, ' ');
    std::vector<std::string> out;
    std::string current(line.substr(0, indent));
    bool has_word = false;
    for (const std::string& unit : units) {
        // Room for the unit and, on every line but the last, the " \" after it.
        if (has_word && display_width(current) + 1 + display_width(unit) + 2 > width) {
            out.push_back(current + " \\");
            current = continued;
            has_word = false;
        }
        if (has_word) current += ' ';
        current += unit;
        has_word = true;
    }
    out.push_back(current);
    return out;
}

}  // namespace mlens
