#include "mlens/text/readable_text.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "mlens/text/digits.h"
#include "mlens/text/escape.h"
#include "mlens/text/utf8.h"

namespace mlens {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<uint32_t> hex4(std::string_view s, size_t at) {
    if (at + 4 > s.size()) return std::nullopt;
    uint32_t v = 0;
    for (size_t i = at; i < at + 4; ++i) {
        int h = hex_digit_value(s[i]);
        if (h < 0) return std::nullopt;
        v = v << 4 | static_cast<uint32_t>(h);
    }
    return v;
}

// What a reader could mistake or not see: these stay escaped inside strings.
bool stays_escaped(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || is_invisible_format(cp) || (cp >= 0xD800 && cp <= 0xDFFF);
}

// The string starting at s[i] == '"', copied to out with its escapes resolved as the contract
// says; i ends after the closing quote. False when it is not a valid JSON string.
bool copy_string(std::string_view s, size_t& i, std::string& out) {
    out += '"';
    for (++i; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '"') {
            out += '"';
            ++i;
            return true;
        }
        if (static_cast<uint8_t>(c) < 0x20) return false;
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i == s.size()) return false;
        const char e = s[i];
        if (e == '/') {
            out += '/';
        } else if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
            out += '\\';
            out += e;
        } else if (e == 'u') {
            std::optional<uint32_t> cp = hex4(s, i + 1);
            if (!cp) return false;
            size_t written_to = i + 4;  // last character of the escape as written
            uint32_t value = *cp;
            if (value >= 0xD800 && value <= 0xDBFF && written_to + 2 < s.size() && s[written_to + 1] == '\\' && s[written_to + 2] == 'u') {
                std::optional<uint32_t> low = hex4(s, written_to + 3);
                if (low && *low >= 0xDC00 && *low <= 0xDFFF) {
                    value = 0x10000 + ((value - 0xD800) << 10) + (*low - 0xDC00);
                    written_to += 6;
                }
            }
            if (stays_escaped(value))
                out.append(s.substr(i - 1, written_to - i + 2));
            else if (value == '"' || value == '\\')
                (out += '\\') += static_cast<char>(value);  // as JSON must write them
            else
                append_utf8(out, value);
            i = written_to;
        } else {
            return false;
        }
    }
    return false;
}

bool copy_number(std::string_view s, size_t& i, std::string& out) {
    const size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    if (i < s.size() && s[i] == '0')
        ++i;
    else if (i < s.size() && is_digit(s[i]))
        while (i < s.size() && is_digit(s[i])) ++i;
    else
        return false;
    if (i < s.size() && s[i] == '.') {
        if (++i == s.size() || !is_digit(s[i])) return false;
        while (i < s.size() && is_digit(s[i])) ++i;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        if (++i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (i == s.size() || !is_digit(s[i])) return false;
        while (i < s.size() && is_digit(s[i])) ++i;
    }
    out.append(s.substr(start, i - start));
    return true;
}

bool copy_literal(std::string_view s, size_t& i, std::string& out) {
    for (std::string_view word : {"true", "false", "null"})
        if (s.substr(i, word.size()) == word) {
            out.append(word);
            i += word.size();
            return true;
        }
    return false;
}

}  // namespace

std::optional<std::string> pretty_json(std::string_view s) {
    if (!utf8_valid(s)) return std::nullopt;
    struct Open {
        char close;
        bool empty = true;
    };
    enum class Expect { value, key, colon, comma };
    std::vector<Open> open;
    std::string out;
    auto newline = [&out](size_t depth) {
        out += '\n';
        out.append(std::min(depth, kMaxPrettyJsonIndent) * 2, ' ');
    };
    Expect expect = Expect::value;
    bool done = false;
    size_t i = 0;
    while (true) {
        while (i < s.size() && is_space(s[i])) ++i;
        if (i == s.size()) break;
        if (done) return std::nullopt;
        const char c = s[i];
        if ((c == '}' || c == ']') && !open.empty() && open.back().close == c &&
            (expect == Expect::comma || (open.back().empty && expect == (c == '}' ? Expect::key : Expect::value)))) {
            const bool empty = open.back().empty;
            open.pop_back();
            if (!empty) newline(open.size());
            out += c;
            ++i;
            expect = Expect::comma;
            done = open.empty();
            continue;
        }
        switch (expect) {
            case Expect::comma:
                if (c != ',' || open.empty()) return std::nullopt;
                out += ',';
                newline(open.size());
                ++i;
                expect = open.back().close == '}' ? Expect::key : Expect::value;
                continue;
            case Expect::colon:
                if (c != ':') return std::nullopt;
                out += ": ";
                ++i;
                expect = Expect::value;
                continue;
            case Expect::key:
                if (c != '"') return std::nullopt;
                if (open.back().empty) newline(open.size());
                open.back().empty = false;
                if (!copy_string(s, i, out)) return std::nullopt;
                expect = Expect::colon;
                continue;
            case Expect::value:
                break;
        }
        // A value: inside an array it opens a new line the first time.
        if (!open.empty() && open.back().close == ']' && open.back().empty) {
            newline(open.size());
            open.back().empty = false;
        }
        if (c == '{' || c == '[') {
            if (open.size() == kMaxPrettyJsonDepth) return std::nullopt;
            out += c;
            open.push_back({c == '{' ? '}' : ']'});
            ++i;
            expect = c == '{' ? Expect::key : Expect::value;
            continue;
        }
        bool ok = c == '"' ? copy_string(s, i, out) : (c == '-' || is_digit(c)) ? copy_number(s, i, out) : copy_literal(s, i, out);
        if (!ok) return std::nullopt;
        expect = Expect::comma;
        done = open.empty();
    }
    if (!done) return std::nullopt;
    return out;
}

std::string readable_json(std::string_view text, size_t max_chars) {
    if (std::optional<std::string> pretty = pretty_json(text)) return readable_text(*pretty, max_chars);
    return readable_text(text, max_chars);
}

TextHead first_lines(std::string_view text, size_t lines) {
    std::vector<std::string_view> all;
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        all.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    TextHead head;
    const size_t shown = std::min(lines, all.size());
    for (size_t i = 0; i < shown; ++i) (head.text += i ? "\n" : "") += all[i];
    head.more_lines = all.size() - shown;
    while (!head.text.empty() && (head.text.back() == '\n' || head.text.back() == ' ' || head.text.back() == '\t')) head.text.pop_back();
    return head;
}

}  // namespace mlens
