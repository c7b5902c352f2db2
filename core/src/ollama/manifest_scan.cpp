// The plain-manifest scanner: a cursor over the text that gives up (nullopt) at the first byte
// outside the subset manifest_scan.h describes, so it never has to report anything itself.
#include "manifest_scan.h"

#include <algorithm>
#include <limits>
#include <string>

namespace mlens {

namespace {

constexpr size_t kReservedLayersFrom = 64;  // braces in a manifest above which its layers are reserved

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class PlainScanner {
public:
    PlainScanner(std::string_view text, uint64_t base) : m_text(text), m_base(base) {}

    bool manifest(Manifest& m) {
        constexpr unsigned kSchema = 1, kMediaType = 2, kConfig = 4, kLayers = 8;
        space();
        const bool read = object(kSchema | kConfig | kLayers, [&](std::string_view key) -> unsigned {
            if (key == "schemaVersion") {
                uint64_t at = 0;
                return number(m.schema_version, at) && m.schema_version == 2 ? kSchema : 0;
            }
            if (key == "mediaType") {
                std::string_view value;
                if (!string(value)) return 0;
                m.media_type = value;
                return kMediaType;
            }
            if (key == "config") return (m.has_config = layer(m.config, "config", true)) ? kConfig : 0;
            if (key == "layers") return layers(m) ? kLayers : 0;
            return 0;
        });
        space();
        return read && m_at == m_text.size();
    }

private:
    void space() {
        while (m_at < m_text.size() && json_space(m_text[m_at])) ++m_at;
    }

    bool take(char c) {
        if (m_at >= m_text.size() || m_text[m_at] != c) return false;
        ++m_at;
        return true;
    }

    uint64_t offset() const { return m_base + m_at; }

    // A string of printable ASCII without escapes; `value` is its content.
    bool string(std::string_view& value) {
        if (!take('"')) return false;
        const size_t start = m_at;
        while (m_at < m_text.size()) {
            const unsigned char c = static_cast<unsigned char>(m_text[m_at]);
            if (c == '"') {
                value = m_text.substr(start, m_at - start);
                ++m_at;
                return true;
            }
            if (c < 0x20 || c > 0x7E || c == '\\') return false;
            ++m_at;
        }
        return false;
    }

    bool key_colon(std::string_view& key) {
        space();
        if (!string(key)) return false;
        space();
        if (!take(':')) return false;
        space();
        return true;
    }

    // A non-negative integer in canonical decimal that fits 64 bits; `at` is where it starts.
    bool number(uint64_t& value, uint64_t& at) {
        at = offset();
        const size_t start = m_at;
        value = 0;
        while (m_at < m_text.size() && m_text[m_at] >= '0' && m_text[m_at] <= '9') {
            const uint64_t digit = static_cast<uint64_t>(m_text[m_at] - '0');
            if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
            value = value * 10 + digit;
            ++m_at;
        }
        if (m_at == start || (m_text[start] == '0' && m_at - start > 1)) return false;
        return true;
    }

    bool layers(Manifest& m) {
        if (!take('[')) return false;
        space();
        if (take(']')) return true;
        do {
            space();
            if (m.layers.size() >= kMaxLayers) return false;
            m.layers.emplace_back();
            if (!layer(m.layers.back(), "layers[" + std::to_string(m.layers.size() - 1) + "]", false)) return false;
            space();
        } while (take(','));
        return take(']');
    }

    bool layer(ManifestLayer& l, std::string field, bool is_config) {
        constexpr unsigned kMedia = 1, kDigest = 2, kSize = 4, kFrom = 8, kName = 16;
        l.field = std::move(field);
        l.range.offset = offset();
        const bool read = object(kMedia | kDigest | kSize, [&](std::string_view key) -> unsigned {
            if (key == "size") {
                l.has_size = number(l.size, l.size_at);
                return l.has_size ? kSize : 0;
            }
            const uint64_t at = offset();
            std::string_view value;
            if (!string(value)) return 0;
            if (key == "mediaType") {
                l.media_type = value;
                return kMedia;
            }
            if (key == "digest") {
                l.digest = value;
                l.digest_at = at;
                return kDigest;
            }
            if (key == "from") {
                l.from = std::string(value);
                return kFrom;
            }
            if (key == "name") {
                l.name = std::string(value);
                return kName;
            }
            return 0;
        });
        if (!read) return false;
        l.range.length = offset() - l.range.offset;
        l.kind = is_config ? LayerKind::config : layer_kind(l.media_type);
        return true;
    }

    // An object whose members read_member reads, given its key (the cursor at its value): it
    // returns the member's bit, or 0 to decline (an unknown key, a value outside the subset).
    // Each member at most once, and every bit of `required` there.
    template <typename ReadMember>
    bool object(unsigned required, ReadMember read_member) {
        unsigned seen = 0;
        if (!take('{')) return false;
        do {
            std::string_view key;
            if (!key_colon(key)) return false;
            const unsigned bit = read_member(key);
            if (bit == 0 || (seen & bit)) return false;
            seen |= bit;
            space();
        } while (take(','));
        return take('}') && (seen & required) == required;
    }

    std::string_view m_text;
    uint64_t m_base;
    size_t m_at = 0;
};

}  // namespace

std::optional<Manifest> scan_plain_manifest(std::string_view text, uint64_t base) {
    if (text.size() > kMaxManifestBytes) return std::nullopt;
    Manifest m;
    // A manifest of many layers has them reserved at once (grown, they would be moved over and
    // over): every layer object opens with a brace, and the root object is none. A small one
    // grows as it is read, so that the reserve never outweighs its few layers.
    const size_t braces = static_cast<size_t>(std::count(text.begin(), text.end(), '{'));
    if (braces > kReservedLayersFrom) m.layers.reserve(std::min<size_t>(braces - 1, kMaxLayers));
    if (!PlainScanner(text, base).manifest(m)) return std::nullopt;
    finish_manifest(m);
    return m;
}

}  // namespace mlens
