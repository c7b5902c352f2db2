// Counts of histogram slots kept in four interleaved copies of 16-bit counters, so that runs of
// values in one slot (common in quantized and smooth data) do not wait on each other's
// increments. Internal to core/quant; used by the passes that bin values (stats.cpp,
// scaled_group_stats.cpp).
//
// Contract: reset(slots) clears the copies (4 * slots counters: 32 KiB for 4,098 slots, which
// stay in L1); add(slot, n, counts) counts n slot indices (each below `slots`), first adding the
// copies into `counts` and clearing them when the counts pending would pass kFlushAfter (each
// copy then holds at most a quarter of them plus a tail of three, below 65536); flush(counts)
// adds what is pending. After flush, counts[s] has grown by the number of indices s added.
// reserve(n, counts), for loops that increment the copies themselves, flushes as add would and
// returns the first copy (the others follow, slots() counters apart): the caller then adds n
// indices, a quarter of them to each copy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mlens {

class SlotCopies {
public:
    static constexpr uint64_t kFlushAfter = 4 * 60000;

    void reset(uint32_t slots) {
        m_slots = slots;
        m_copies.assign(4 * static_cast<size_t>(slots), 0);
        m_pending = 0;
    }

    void add(const uint32_t* slot, uint64_t n, uint32_t* counts) {
        if (m_pending + n > kFlushAfter) flush(counts);
        uint16_t* c0 = m_copies.data();
        uint16_t* c1 = c0 + m_slots;
        uint16_t* c2 = c1 + m_slots;
        uint16_t* c3 = c2 + m_slots;
        uint64_t i = 0;
        for (; i + 4 <= n; i += 4) {
            ++c0[slot[i]];
            ++c1[slot[i + 1]];
            ++c2[slot[i + 2]];
            ++c3[slot[i + 3]];
        }
        for (; i < n; ++i) ++c0[slot[i]];
        m_pending += n;
    }

    uint16_t* reserve(uint64_t n, uint32_t* counts) {
        if (m_pending + n > kFlushAfter) flush(counts);
        m_pending += n;
        return m_copies.data();
    }
    uint32_t slots() const { return m_slots; }

    void flush(uint32_t* counts) {
        const uint16_t* c0 = m_copies.data();
        const uint16_t* c1 = c0 + m_slots;
        const uint16_t* c2 = c1 + m_slots;
        const uint16_t* c3 = c2 + m_slots;
        for (uint32_t s = 0; s < m_slots; ++s) counts[s] += static_cast<uint32_t>(c0[s] + c1[s] + c2[s] + c3[s]);
        std::fill(m_copies.begin(), m_copies.end(), 0);
        m_pending = 0;
    }

private:
    uint32_t m_slots = 0;
    uint64_t m_pending = 0;
    std::vector<uint16_t> m_copies;
};

}  // namespace mlens
