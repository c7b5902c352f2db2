#include "mlens/model/string_offsets.h"

#include <algorithm>

namespace mlens {

StringOffsets::StringOffsets(uint64_t base, uint64_t capacity)
    : m_base(base), m_capacity(capacity), m_low(capacity ? new uint32_t[capacity] : nullptr) {}

uint64_t StringOffsets::high_bits_at(uint64_t i) const {
    auto after = std::upper_bound(m_wraps.begin(), m_wraps.end(), i, [](uint64_t index, const auto& wrap) { return index < wrap.first; });
    return after == m_wraps.begin() ? 0 : std::prev(after)->second;
}

// Records that element `index`, at `offset`, starts a new run of high bits when they differ from
// its predecessor's.
void StringOffsets::note_high_bits(uint64_t index, uint64_t offset) {
    const uint64_t high = (offset - m_base) >> 32;
    const uint64_t previous = m_wraps.empty() ? 0 : m_wraps.back().second;
    if (high != previous) m_wraps.emplace_back(index, high);
}

void StringOffsets::append(uint64_t offset) {
    note_high_bits(m_size, offset);
    m_low[m_size++] = static_cast<uint32_t>(offset - m_base);
}

// A bulk writer's elements come from one buffer (far less than 4 GiB), so their high bits change
// at most where their low bits go down; that is searched for only when the first and the last
// differ in their high bits.
void StringOffsets::commit(uint64_t n, uint64_t first_offset, uint64_t last_offset) {
    if (n == 0) return;
    note_high_bits(m_size, first_offset);
    if ((first_offset - m_base) >> 32 != (last_offset - m_base) >> 32) {
        for (uint64_t i = m_size + 1; i < m_size + n; ++i)
            if (m_low[i] < m_low[i - 1]) note_high_bits(i, last_offset);
    }
    m_size += n;
}

void StringOffsets::truncate(uint64_t n) {
    m_size = std::min(n, m_size);
    while (!m_wraps.empty() && m_wraps.back().first >= m_size) m_wraps.pop_back();
}

}  // namespace mlens
