// StringOffsets: where each element of a STRING array starts (the file offset of its length
// field), at 4 bytes per element, so that indexing a 262k-token vocabulary costs 1 MiB.
//
// Contract:
//  - Offsets are appended in increasing order and at or after the base given at construction
//    (the array's first element); each is stored as the low 32 bits of (offset − base). Where the
//    high bits change (an array spanning 4 GiB or more) the index where they change is kept
//    beside, so offsets are exact at any distance from the base; below 4 GiB a lookup is one load.
//  - The storage holds `capacity` offsets, is not zero-filled (every slot read was written), and
//    is shared by copies: a copy may be truncated, but only the table still being filled (before
//    it is copied) may be appended to.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace mlens {

class StringOffsets {
public:
    StringOffsets() = default;
    StringOffsets(uint64_t base, uint64_t capacity);

    uint64_t size() const { return m_size; }
    uint64_t base() const { return m_base; }
    uint64_t operator[](uint64_t i) const {  // i < size()
        const uint64_t high = m_wraps.empty() ? 0 : high_bits_at(i);
        return m_base + (high << 32 | m_low[i]);
    }

    void append(uint64_t offset);  // size() < capacity, offset >= the last one and the base

    // Filling in bulk: a writer stores the low 32 bits of (offset − base) of the next elements at
    // next_slots() (at most capacity − size() of them), then commits them, giving the full
    // offsets of the first and the last it wrote.
    uint32_t* next_slots() { return m_low.get() + m_size; }
    uint64_t free_slots() const { return m_capacity - m_size; }
    void commit(uint64_t n, uint64_t first_offset, uint64_t last_offset);

    void truncate(uint64_t n);  // keeps the first min(n, size()) offsets

private:
    uint64_t high_bits_at(uint64_t i) const;
    void note_high_bits(uint64_t index, uint64_t offset);

    uint64_t m_base = 0;
    uint64_t m_size = 0;
    uint64_t m_capacity = 0;
    std::shared_ptr<uint32_t[]> m_low;
    std::vector<std::pair<uint64_t, uint64_t>> m_wraps;  // (first index, high 32 bits of offset − base), ascending
};

}  // namespace mlens
