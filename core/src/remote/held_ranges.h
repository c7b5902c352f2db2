// HeldRanges: the byte ranges one remote source holds in memory, under one bound on what all remote
// sources of the process hold together. Internal to core/remote; remote_source.h states the
// bound users see.
//
// Contract:
//  - A HeldRanges keeps ranges that never overlap, by offset, each stamped with its last use on
//    one clock for the whole process, so that uses in two sources compare.
//  - `owner` is the mutex its source holds while it touches the ranges (hold, at, copy_out,
//    settle). Every HeldRanges is known to the process's ledger from construction to destruction.
//  - settle(), called with `owner` held after a read, drops least recently used ranges while this
//    source, or all sources together, hold more than the limit (kHeldBytes, or what set_remote_held_limit set, remote_source.h): each time the least
//    recently used range among this source's (never its most recently used one, which the read
//    just used or fetched ahead) and every other source's whose owner is not busy (its mutex taken
//    by try_lock; a busy source settles itself after its own read). So once reads are done, the
//    process holds at most the limit, plus the newest range of each source.
//  - Dropped ranges are fetched again when read again (remote_source.cpp); nothing else changes.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace mlens {

class HeldRanges {
public:
    explicit HeldRanges(std::mutex& owner);
    ~HeldRanges();
    HeldRanges(const HeldRanges&) = delete;
    HeldRanges& operator=(const HeldRanges&) = delete;

    void hold(uint64_t first, std::vector<uint8_t> bytes);
    // Where the range holding `pos` ends; 0 when no range holds it.
    uint64_t end_of_range_at(uint64_t pos) const;
    // Where the first range that starts after `pos` starts; UINT64_MAX when none does.
    uint64_t next_start(uint64_t pos) const;
    // Copies [offset, offset + length), all of it held, to dst and stamps the ranges it used.
    void copy_out(uint64_t offset, uint64_t length, uint8_t* dst);
    void settle();

private:
    struct Range {
        std::vector<uint8_t> bytes;
        uint64_t last_use = 0;
    };
    using Ranges = std::map<uint64_t, Range>;

    Ranges::const_iterator range_at(uint64_t pos) const;
    // The least recently used range, the most recently used one left out when `keep_newest`;
    // end() when there is none such.
    Ranges::iterator oldest(bool keep_newest);
    void drop(Ranges::iterator it);
    // Drops one range of the least recently used source range across the process while it holds
    // more than the limit; false when nothing could be dropped.
    bool drop_one_across_sources();

    std::mutex& m_owner;
    Ranges m_ranges;
    uint64_t m_bytes = 0;
};

}  // namespace mlens
