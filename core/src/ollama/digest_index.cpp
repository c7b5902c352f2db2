// Linear probing from the digest's first 8 bytes (uniformly distributed for sha256, so they are
// the hash); a slot carries 4 more bytes so most probes that miss never touch the key array.
#include "mlens/ollama/digest_index.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace mlens {

namespace {

// Per byte: its value as a lowercase hex digit, or 0x10 (a bit no digit has) for any other byte.
constexpr std::array<uint8_t, 256> kHexValues = [] {
    std::array<uint8_t, 256> values{};
    values.fill(0x10);
    for (int c = '0'; c <= '9'; ++c) values[static_cast<size_t>(c)] = static_cast<uint8_t>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) values[static_cast<size_t>(c)] = static_cast<uint8_t>(c - 'a' + 10);
    return values;
}();

uint64_t slot_hash(const Sha256Bytes& digest) {
    uint64_t h = 0;
    std::memcpy(&h, digest.data(), sizeof h);
    return h;
}

uint32_t slot_tag(const Sha256Bytes& digest) {
    uint32_t t = 0;
    std::memcpy(&t, digest.data() + 8, sizeof t);
    return t;
}

}  // namespace

std::optional<Sha256Bytes> sha256_bytes(std::string_view hex) {
    if (hex.size() != 64) return std::nullopt;
    Sha256Bytes out{};
    uint8_t bad = 0;
    for (size_t i = 0; i < out.size(); ++i) {
        const uint8_t hi = kHexValues[static_cast<unsigned char>(hex[2 * i])], lo = kHexValues[static_cast<unsigned char>(hex[2 * i + 1])];
        bad |= hi | lo;
        out[i] = static_cast<uint8_t>((hi << 4) | (lo & 15));
    }
    if (bad & 0x10) return std::nullopt;
    return out;
}

DigestIndex::DigestIndex(size_t capacity) : m_slots(std::bit_ceil(std::max<size_t>(2 * capacity, 16))), m_capacity(capacity) {
    m_keys.reserve(capacity);
    m_values.reserve(capacity);
}

size_t DigestIndex::slot_of(const Sha256Bytes& digest, uint32_t tag) const {
    const size_t mask = m_slots.size() - 1;
    for (size_t at = static_cast<size_t>(slot_hash(digest)) & mask;; at = (at + 1) & mask) {
        const Slot& s = m_slots[at];
        if (s.entry == 0 || (s.tag == tag && m_keys[s.entry - 1] == digest)) return at;
    }
}

std::pair<uint32_t, bool> DigestIndex::insert(const Sha256Bytes& digest, uint32_t value) {
    if (m_slots.empty()) return {kNoValue, false};
    const uint32_t tag = slot_tag(digest);
    Slot& s = m_slots[slot_of(digest, tag)];
    if (s.entry != 0) return {m_values[s.entry - 1], false};
    if (m_keys.size() >= m_capacity) return {kNoValue, false};
    m_keys.push_back(digest);
    m_values.push_back(value);
    s = {tag, static_cast<uint32_t>(m_keys.size())};
    return {value, true};
}

std::optional<uint32_t> DigestIndex::find(const Sha256Bytes& digest) const {
    if (m_slots.empty()) return std::nullopt;
    const Slot& s = m_slots[slot_of(digest, slot_tag(digest))];
    if (s.entry == 0) return std::nullopt;
    return m_values[s.entry - 1];
}

}  // namespace mlens
