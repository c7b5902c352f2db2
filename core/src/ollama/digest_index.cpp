// Linear probing from the digest's first 8 bytes (uniformly distributed for sha256, so they are
// the hash); a slot carries 4 more bytes so most probes that miss never touch the key array.
#include "mlens/ollama/digest_index.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace mlens {

namespace {

// Eight hex digits (as loaded little-endian: the first digit in the low byte) to their four bytes
// in the digits' order; false when any of the eight is not a lowercase hex digit. Each byte's
// range is tested in the whole word at once: with the high bit set first, subtracting a bound
// leaves that bit set exactly where the byte is at least the bound.
bool hex8(uint64_t x, uint8_t* out) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    const uint64_t high = x | kHigh;
    const uint64_t at_least_0 = (high - '0' * kOnes) & kHigh, above_9 = (high - ('9' + 1) * kOnes) & kHigh;
    const uint64_t at_least_a = (high - 'a' * kOnes) & kHigh, above_f = (high - ('f' + 1) * kOnes) & kHigh;
    const uint64_t digit = at_least_0 & ~above_9, letter = at_least_a & ~above_f;
    if ((x & kHigh) != 0 || (digit | letter) != kHigh) return false;
    // '0'-'9' carry their value in the low nibble, 'a'-'f' theirs minus 9.
    const uint64_t nibbles = (x & 0x0F0F0F0F0F0F0F0Full) + (letter >> 7) * 9;
    for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(((nibbles >> (16 * i)) & 0x0F) << 4 | ((nibbles >> (16 * i + 8)) & 0x0F));
    return true;
}

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
    for (size_t i = 0; i < 8; ++i) {
        uint64_t word = 0;
        std::memcpy(&word, hex.data() + 8 * i, sizeof word);
        if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
        if (!hex8(word, out.data() + 4 * i)) return std::nullopt;
    }
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
