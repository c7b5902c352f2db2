#include "display_text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr std::string_view kSentencePieceSpace = "\xE2\x96\x81";  // U+2581
constexpr std::string_view kByteLevelSpace = "\xC4\xA0";  // U+0120
constexpr std::string_view kByteLevelNewline = "\xC4\x8A";  // U+010A

size_t count_code_points(std::string_view s) {
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

class SegmentBuilder {
public:
    explicit SegmentBuilder(size_t max_chars) : m_budget(max_chars) {}

    // Returns false once the budget is used up (a "…" has then been appended).
    bool add(PieceSegmentKind kind, std::string_view text, size_t chars) {
        if (m_cut) return false;
        if (chars > m_budget) {
            cut();
            return false;
        }
        m_budget -= chars;
        append(kind, text);
        return true;
    }
    void cut() {
        m_cut = true;
        append(PieceSegmentKind::text, "\xE2\x80\xA6");
    }
    size_t remaining() const { return m_budget; }

    std::vector<PieceSegment> take() { return std::move(m_segments); }

private:
    void append(PieceSegmentKind kind, std::string_view text) {
        if (!m_segments.empty() && m_segments.back().kind == kind && kind != PieceSegmentKind::byte_token)
            m_segments.back().text += text;
        else
            m_segments.push_back({kind, std::string(text)});
    }

    size_t m_budget;
    bool m_cut = false;
    std::vector<PieceSegment> m_segments;
};

}  // namespace

std::string code_points_text(std::string_view s, size_t max_points) {
    std::string points;
    for (size_t i = 0, n = 0; i < s.size() && n < max_points; ++n) {
        uint32_t cp = 0;
        const size_t len = utf8_decode(s.substr(i), cp);
        char buf[24];
        if (len == 0)
            std::snprintf(buf, sizeof buf, "\\x%02X ", static_cast<unsigned char>(s[i]));
        else
            std::snprintf(buf, sizeof buf, "U+%04X ", cp);
        points += buf;
        i += len ? len : 1;
    }
    return points;
}

bool is_byte_token(std::string_view piece) {
    return piece.size() == 6 && piece.starts_with("<0x") && piece[5] == '>' && std::isxdigit(static_cast<unsigned char>(piece[3])) &&
        std::isxdigit(static_cast<unsigned char>(piece[4]));
}

namespace {

std::vector<PieceSegment> visible_segments(std::string_view piece, size_t max_chars, bool markers) {
    SegmentBuilder out(max_chars);
    if (markers && is_byte_token(piece)) {
        out.add(PieceSegmentKind::byte_token, piece, piece.size());
        return out.take();
    }
    size_t i = 0;
    while (i < piece.size()) {
        unsigned char c = static_cast<unsigned char>(piece[i]);
        std::string_view rest = piece.substr(i);
        PieceSegmentKind kind = PieceSegmentKind::text;
        std::string shown;
        size_t consumed = 1;
        if (c == ' ') {
            kind = PieceSegmentKind::space;
            shown = "\xC2\xB7";  // U+00B7 middle dot
        } else if (c < 0x20 || c == 0x7F) {
            kind = PieceSegmentKind::escape;
            if (c == '\n')
                shown = "\\n";
            else if (c == '\t')
                shown = "\\t";
            else if (c == '\r')
                shown = "\\r";
            else {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02X", c);
                shown = buf;
            }
        } else if (c < 0x80) {
            // Printable ASCII: take the whole run at once.
            while (consumed < rest.size()) {
                unsigned char d = static_cast<unsigned char>(rest[consumed]);
                if (d <= 0x20 || d >= 0x7F) break;
                ++consumed;
            }
            if (consumed > out.remaining()) {
                out.add(kind, rest.substr(0, out.remaining()), out.remaining());
                out.cut();
                return out.take();
            }
            out.add(kind, rest.substr(0, consumed), consumed);
            i += consumed;
            continue;
        } else if (markers && rest.starts_with(kSentencePieceSpace)) {
            kind = PieceSegmentKind::marker;
            shown = kSentencePieceSpace;
            consumed = kSentencePieceSpace.size();
        } else if (markers && (rest.starts_with(kByteLevelSpace) || rest.starts_with(kByteLevelNewline))) {
            kind = PieceSegmentKind::marker;
            shown = std::string(rest.substr(0, 2));
            consumed = 2;
        } else {
            // One character outside ASCII: kept when escape_for_display keeps it, otherwise
            // shown as its escape (invalid bytes, C1 controls, bidi controls).
            uint32_t cp = 0;
            consumed = std::max<size_t>(utf8_decode(rest, cp), 1);
            std::string_view seq = rest.substr(0, consumed);
            shown = escape_for_display(seq, SIZE_MAX);
            if (shown != seq) kind = PieceSegmentKind::escape;
        }
        size_t chars = kind == PieceSegmentKind::escape ? count_code_points(shown) : 1;
        if (!out.add(kind, shown, chars)) return out.take();
        i += consumed;
    }
    return out.take();
}

}  // namespace

std::vector<PieceSegment> visible_piece(std::string_view piece, size_t max_chars, PieceEncoding encoding) {
    if (encoding == PieceEncoding::byte_level)
        if (std::optional<std::string> text = byte_level_decode(piece)) return visible_segments(*text, max_chars, false);
    return visible_segments(piece, max_chars, true);
}

std::string visible_piece_text(std::string_view piece, size_t max_chars, PieceEncoding encoding) {
    std::string s;
    for (const PieceSegment& seg : visible_piece(piece, max_chars, encoding)) s += seg.text;
    return s;
}

std::string escape_multiline(std::string_view s, size_t max_bytes) {
    std::string_view text = s.substr(0, std::min(s.size(), max_bytes));
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        bool last = end == std::string_view::npos;
        if (last) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        std::string expanded;
        for (char c : line) {
            if (c == '\t')
                expanded += "    ";
            else
                expanded += c;
        }
        out += escape_for_display(expanded, SIZE_MAX);
        if (last) break;
        out += '\n';
        start = end + 1;
    }
    if (text.size() < s.size()) out += "\n\xE2\x80\xA6 (" + std::to_string(s.size() - text.size()) + " more bytes)";
    return out;
}

}  // namespace mlens
