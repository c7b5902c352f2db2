#include "mlens/text/fit_width.h"

#include <algorithm>

#include "mlens/text/display_width.h"
#include "mlens/text/utf8.h"

namespace mlens {

namespace {

struct CodePoint {
    size_t begin = 0, size = 0;
    int width = 0;
};

std::vector<CodePoint> code_points(std::string_view text) {
    std::vector<CodePoint> out;
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        size_t n = utf8_decode(text.substr(i), cp);
        // An invalid byte takes one column, as display_width counts it.
        out.push_back({i, n ? n : 1, n ? code_point_width(cp) : 1});
        i += n ? n : 1;
    }
    return out;
}

}  // namespace

std::string elide_middle(std::string_view text, size_t width) {
    if (display_width(text) <= width) return std::string(text);
    if (width == 0) return "";
    const std::vector<CodePoint> cps = code_points(text);
    const size_t room = width - 1;  // "…" takes one column
    const size_t tail_room = room - room / 3;
    size_t tail_begin = cps.size(), tail_width = 0;
    while (tail_begin > 0 && tail_width + cps[tail_begin - 1].width <= tail_room) tail_width += cps[--tail_begin].width;
    size_t head_end = 0, head_width = 0;
    while (head_end < tail_begin && head_width + cps[head_end].width <= room - tail_width) head_width += cps[head_end++].width;
    const size_t head_bytes = head_end < cps.size() ? cps[head_end].begin : text.size();
    const size_t tail_bytes = tail_begin < cps.size() ? cps[tail_begin].begin : text.size();
    return std::string(text.substr(0, head_bytes)) + "\xE2\x80\xA6" + std::string(text.substr(tail_bytes));
}

std::vector<std::string> wrap_words(std::string_view line, size_t width) {
    if (display_width(line) <= width) return {std::string(line)};
    const size_t indent = line.find_first_not_of(' ') == std::string_view::npos ? line.size() : line.find_first_not_of(' ');
    const std::string hanging(indent + 2, ' ');
    std::vector<std::string> out;
    std::string piece(line.substr(0, indent));
    size_t piece_width = indent;
    bool piece_has_word = false;
    for (size_t i = indent; i < line.size();) {
        const size_t end = std::min(line.find(' ', i), line.size());
        const std::string_view word = line.substr(i, end - i);
        const size_t word_width = display_width(word);
        if (piece_has_word && piece_width + 1 + word_width > width) {
            out.push_back(std::move(piece));
            piece = hanging;
            piece_width = hanging.size();
            piece_has_word = false;
        }
        if (piece_has_word) {
            piece += ' ';
            ++piece_width;
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

}  // namespace mlens
