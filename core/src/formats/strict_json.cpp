// nlohmann's SAX parser does the tokenizing and grammar (iteratively, with strict end-of-input
// checks); this bridge adds what it leaves out: UTF-8 and start checks, the depth cap, duplicate
// keys, canonical integers and byte positions. nlohmann reports no positions with its events, so
// the bridge re-finds each token in the text: it starts where the previous token ended and skips
// whitespace, ',' and ':'. The parser has already validated the token when its event arrives, so
// this rescan only ever walks forward over well-formed text, once.
#include "mlens/formats/strict_json.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <new>
#include <vector>

#include "keyed_hash.h"
#include "mlens/text/escape.h"
#include "mlens/text/utf8.h"

namespace mlens {

bool JsonHandler::duplicate_key(const std::string& name, const JsonToken& t) {
    return reject(ErrorCode::E_DUPLICATE_KEY, field(), t.offset, "\"" + escape_for_display(name) + "\" appears more than once");
}

bool JsonHandler::reject(ErrorCode code, std::string field, uint64_t offset, std::string message) {
    m_rejection = Error{std::move(code), std::move(field), offset, std::move(message)};
    return false;
}

namespace {

// Key indices in KeySet are 32-bit; every key takes at least 4 bytes ("":0), so this is ample.
constexpr uint64_t kMaxTextBytes = 0xFFFFFFFFull;

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_number_char(char c) { return is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// Keys of one open object. Tensor entries have three keys, so a short list is scanned linearly;
// past kLinear keys an open-addressing table over a byte arena takes over, so a header with a
// million tensor names costs one allocation-free probe per key.
class KeySet {
public:
    void clear() {
        m_arena.clear();
        m_keys.clear();
        m_table.clear();
    }

    // False if the key was already present.
    bool insert(std::string_view key) {
        const uint64_t hash = KeyedHash{}(key);
        if (m_table.empty()) {
            for (const Key& k : m_keys)
                if (k.hash == hash && text(k) == key) return false;
            add(key, hash);
            if (m_keys.size() > kLinear) rebuild(64);
            return true;
        }
        if ((m_keys.size() + 1) * 2 > m_table.size()) rebuild(m_table.size() * 2);
        const size_t mask = m_table.size() - 1;
        const uint64_t tag = hash >> 32 << 32;
        size_t i = hash & mask;
        for (; m_table[i] != 0; i = (i + 1) & mask) {
            if ((m_table[i] >> 32 << 32) != tag) continue;
            const Key& k = m_keys[(m_table[i] & 0xFFFFFFFFu) - 1];
            if (k.hash == hash && text(k) == key) return false;
        }
        add(key, hash);
        m_table[i] = tag | m_keys.size();
        return true;
    }

private:
    struct Key {
        uint64_t hash;
        uint64_t offset;  // in m_arena
        uint64_t length;
    };
    static constexpr size_t kLinear = 8;

    std::string_view text(const Key& k) const { return std::string_view(m_arena).substr(k.offset, k.length); }
    void add(std::string_view key, uint64_t hash) {
        m_keys.push_back({hash, m_arena.size(), key.size()});
        m_arena.append(key);
    }
    // Slots hold the hash's upper 32 bits over the key index + 1 (0 = empty); the table size is a
    // power of two and at most half full, so most probes never touch the keys themselves.
    void rebuild(size_t slots) {
        m_table.assign(slots, 0);
        const size_t mask = slots - 1;
        for (size_t k = 0; k < m_keys.size(); ++k) {
            size_t i = m_keys[k].hash & mask;
            while (m_table[i] != 0) i = (i + 1) & mask;
            m_table[i] = (m_keys[k].hash >> 32 << 32) | (k + 1);
        }
    }

    std::string m_arena;
    std::vector<Key> m_keys;
    std::vector<uint64_t> m_table;
};

class SaxBridge {
public:
    using number_integer_t = int64_t;
    using number_unsigned_t = uint64_t;
    using number_float_t = double;
    using string_t = std::string;
    using binary_t = nlohmann::json::binary_t;

    SaxBridge(std::string_view text, uint64_t base, JsonHandler& handler, const JsonLimits& limits, JobContext* job)
        : m_text(text), m_base(base), m_handler(handler), m_limits(limits), m_job(job) {}

    std::optional<Error> error;  // set when the bridge itself stopped the parse

    bool null() { return tick() && m_handler.other_value(JsonKind::null, literal(4)); }
    bool boolean(bool v) { return tick() && m_handler.other_value(JsonKind::boolean, literal(v ? 4 : 5)); }
    bool number_integer(number_integer_t) { return other_number(); }
    bool number_float(number_float_t, const string_t&) { return other_number(); }
    bool number_unsigned(number_unsigned_t v) {
        JsonToken t = number_token();
        return tick() && canonical(t) && m_handler.unsigned_value(v, t);
    }
    bool string(string_t& s) {
        JsonToken t = string_token();
        return tick() && m_handler.string_value(s, t);
    }
    bool binary(binary_t&) { return false; }  // JSON text never produces binary values

    bool start_object(std::size_t) {
        JsonToken t = single();
        if (!tick() || !enter(t)) return false;
        if (m_keys.size() <= m_depth) m_keys.resize(m_depth + 1);
        m_keys[m_depth].clear();
        return m_handler.begin_object(t);
    }
    bool key(string_t& name) {
        JsonToken t = string_token();
        if (!tick()) return false;
        if (!m_keys[m_depth].insert(name)) return m_handler.duplicate_key(name, t);
        return m_handler.key(name, t);
    }
    bool end_object() {
        JsonToken t = single();
        --m_depth;
        return m_handler.end_object(t);
    }
    bool start_array(std::size_t) {
        JsonToken t = single();
        return tick() && enter(t) && m_handler.begin_array(t);
    }
    bool end_array() {
        JsonToken t = single();
        --m_depth;
        return m_handler.end_array(t);
    }

    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
        // position counts the characters read, the failing one included (end of input counts as one).
        uint64_t at = position > 0 ? position - 1 : 0;
        std::string what = ex.what();
        if (auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
        std::string message = at >= m_text.size() ? "EOF while parsing: " : "JSON syntax error: ";
        error = Error{ErrorCode::E_JSON_SYNTAX, m_handler.field(), m_base + std::min<uint64_t>(at, m_text.size()),
                      message + escape_for_display(what)};
        return false;
    }

private:
    size_t token_start() {
        while (m_scan < m_text.size() && (is_json_space(m_text[m_scan]) || m_text[m_scan] == ',' || m_text[m_scan] == ':')) ++m_scan;
        return m_scan;
    }
    JsonToken span(size_t start, size_t end) {
        m_scan = std::min(end, m_text.size());
        return {m_base + start, m_scan - start};
    }
    JsonToken single() {
        size_t s = token_start();
        return span(s, s + 1);
    }
    JsonToken literal(size_t length) {
        size_t s = token_start();
        return span(s, s + length);
    }
    JsonToken number_token() {
        size_t s = token_start(), e = s;
        while (e < m_text.size() && is_number_char(m_text[e])) ++e;
        return span(s, e);
    }
    JsonToken string_token() {
        size_t s = token_start(), e = s + 1;
        while (e < m_text.size() && m_text[e] != '"') e += m_text[e] == '\\' ? 2 : 1;
        return span(s, e + 1);
    }

    bool other_number() {
        JsonToken t = number_token();
        return tick() && canonical(t) && m_handler.other_value(JsonKind::number, t);
    }

    // The token as rescanned runs over any digits the parser left for its next token, so "02"
    // shows up here whole (the parser would only fail later, at the '2').
    bool canonical(const JsonToken& t) {
        size_t s = t.offset - m_base, e = s + t.length;
        if (s < e && m_text[s] == '-') ++s;
        if (e - s >= 2 && m_text[s] == '0' && is_digit(m_text[s + 1]))
            return stop(ErrorCode::E_JSON_SYNTAX, t.offset, "JSON syntax error: number with a leading zero");
        return true;
    }

    bool enter(const JsonToken& t) {
        if (++m_depth <= m_limits.max_depth) return true;
        return stop(ErrorCode::E_LIMIT, t.offset,
                    "nesting depth " + std::to_string(m_depth) + " exceeds limit max_json_depth=" + std::to_string(m_limits.max_depth));
    }

    bool tick() {
        if ((++m_events & 0xFFFF) != 0) return true;
        job_report(m_job, m_text.empty() ? 1.0 : static_cast<double>(m_scan) / static_cast<double>(m_text.size()));
        if (!job_cancelled(m_job)) return true;
        error = cancelled_error("parsing", m_base + m_scan);
        error->field = m_handler.field();
        return false;
    }

    bool stop(ErrorCode code, uint64_t offset, std::string message) {
        error = Error{code, m_handler.field(), offset, std::move(message)};
        return false;
    }

    std::string_view m_text;
    uint64_t m_base;
    JsonHandler& m_handler;
    const JsonLimits& m_limits;
    JobContext* m_job;
    size_t m_scan = 0;
    uint32_t m_depth = 0;
    uint64_t m_events = 0;
    std::vector<KeySet> m_keys;  // indexed by depth; only object levels are used
};

}  // namespace

Result<JsonTextInfo> parse_strict_json(std::string_view text, uint64_t base, JsonHandler& handler, const JsonLimits& limits,
                                       JobContext* job) {
    if (text.size() > kMaxTextBytes)
        return Error{
            ErrorCode::E_LIMIT, handler.field(), base,
            "JSON text of " + std::to_string(text.size()) + " bytes exceeds limit max_json_text_bytes=" + std::to_string(kMaxTextBytes)};
    size_t bad = utf8_first_invalid(text);
    if (bad != text.size())
        return Error{ErrorCode::E_JSON_UTF8, handler.field(), base + bad, "byte " + hex_bytes(text.substr(bad, 1)) + " is not valid UTF-8"};
    JsonTextInfo info;
    while (info.leading_whitespace < text.size() && is_json_space(text[info.leading_whitespace])) ++info.leading_whitespace;
    if (info.leading_whitespace == text.size())
        return Error{ErrorCode::E_JSON_SYNTAX, handler.field(), base + text.size(), "EOF while parsing a value"};
    if (text[info.leading_whitespace] != '{')
        return Error{ErrorCode::E_JSON_START, handler.field(), base + info.leading_whitespace,
                     "expected an object ('{'), found " + hex_bytes(text.substr(info.leading_whitespace, 1))};

    // nlohmann's lexer takes a NUL byte for the end of the input, so "{}\0junk" would parse: the
    // text is parsed up to its first NUL, and a value that ends there is followed by a byte that
    // is no JSON (a NUL cannot be inside a valid value either: strings refuse raw control bytes).
    const size_t nul = text.find('\0');
    const std::string_view parsed_text = text.substr(0, nul);
    SaxBridge bridge(parsed_text, base, handler, limits, job);
    bool ok = false;
    try {
        ok = nlohmann::json::sax_parse(parsed_text.data(), parsed_text.data() + parsed_text.size(), &bridge,
                                       nlohmann::json::input_format_t::json, /*strict=*/true, /*ignore_comments=*/false);
    } catch (const std::bad_alloc&) {
        return Error{ErrorCode::E_NO_MEMORY, handler.field(), std::nullopt, "out of memory while parsing JSON"};
    } catch (const std::exception& e) {
        return Error{ErrorCode::E_JSON_SYNTAX, handler.field(), std::nullopt, escape_for_display(e.what())};
    }
    if (ok && nul != std::string_view::npos)
        return Error{ErrorCode::E_JSON_SYNTAX, handler.field(), base + nul,
                     "JSON syntax error: trailing characters: a NUL byte after the value"};
    if (ok) return info;
    if (bridge.error) return *bridge.error;
    if (handler.rejection()) return *handler.rejection();
    return Error{ErrorCode::E_JSON_SYNTAX, handler.field(), std::nullopt, "JSON parse stopped"};
}

}  // namespace mlens
