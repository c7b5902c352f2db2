// The second part of a large STRING array (a vocabulary, its merges), scanned on a second thread
// while the reader scans the first part, so that the open of a vocabulary-sized header takes about
// half the time on two cores.
//
// Contract:
//  - Where the second part starts is not known until the first part is scanned: the tail looks for
//    it at or after a file offset (`from`), as the first position within kSearchBytes from where
//    kConfirmElements elements in a row have plausible lengths and lie wholly in the window read
//    there; from there it scans elements as the reader does (gguf_string_scan.h), with a fresh
//    copy of the key's element check and its own UTF-8 search, until an element breaks a rule or
//    does not fit in a window, max_count elements, or 4 GiB past its start. It reads only through
//    the source (thread-safe) and writes only its own members and the slots it is given.
//  - Nothing it finds is an answer by itself: the reader, having scanned the first part up to an
//    element start at or after start(), takes the tail's elements from the one that starts exactly
//    there (index_of), only when the tail saw no UTF-8 or check failure before that element. So a
//    wrong guess of where an element starts costs time, never a different result, and every
//    diagnostic is the one a scan on one thread reports, for the same element.
//  - Only 8-byte little-endian lengths (GGUF v2 and v3 little-endian files) are split.
//  - It writes the offsets of its first elements where the caller says (a part of the caller's
//    table that the caller leaves alone meanwhile), and those of any more, up to max_count in all,
//    to a buffer of its own (4 bytes each; max_count is bounded by the caller's table); beside that
//    it allocates one window per thread that runs tails, kept for that thread's life.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "gguf_semantic_checks.h"
#include "mlens/io/byte_source.h"
#include "mlens/job.h"

namespace mlens {

class StringArrayTail {
public:
    static constexpr uint64_t kWindowBytes = 256 << 10;
    static constexpr uint64_t kSearchBytes = 64 << 10;
    static constexpr uint64_t kConfirmElements = 16;

    // origin: the array's first element (offsets are kept as in StringOffsets, from it); the first
    // in_place of at most max_count elements are written to `slots`.
    StringArrayTail(const ByteSource& source, uint64_t origin, uint64_t from, uint64_t max_length, uint64_t max_count, uint32_t* slots,
                    uint64_t in_place, std::optional<StringArrayCheck> check, const JobContext* job);

    void scan();  // on the second thread; once

    // After scan():
    uint64_t count() const { return m_count; }
    uint64_t start() const { return m_start; }  // the first element's offset, when count() > 0
    uint64_t offset(uint64_t i) const {  // i <= count(); count() gives where the last one ends
        return i == m_count ? m_end : m_start + static_cast<uint32_t>(slot(i) - m_slots[0]);
    }
    uint64_t in_place() const { return std::min(m_count, m_in_place); }  // elements written to `slots`
    const uint32_t* slots() const { return m_slots; }  // the low 32 bits of (offset − origin)
    // Copies elements [first, first + n) to `out`, which may overlap `slots`.
    void copy_to(uint32_t* out, uint64_t first, uint64_t n) const;
    // Before the caller moves the first n <= in_place() offsets to `slots`: the tail becomes those
    // n elements.
    void first_moving_to(uint32_t* slots, uint64_t n) {
        m_end = offset(n);
        m_count = n;
        m_slots = slots;
    }
    std::optional<uint64_t> index_of(uint64_t offset) const;  // the element that starts at offset
    std::optional<uint64_t> first_invalid_utf8() const { return m_first_invalid_utf8; }
    std::optional<uint64_t> first_check_failure() const { return m_check ? m_check->first_failure() : std::nullopt; }

private:
    std::optional<uint64_t> find_start(const uint8_t* window, uint64_t size) const;
    uint32_t slot(uint64_t i) const { return i < m_in_place ? m_slots[i] : m_overflow[i - m_in_place]; }

    const ByteSource& m_source;
    const uint64_t m_origin;
    const uint64_t m_from;
    const uint64_t m_max_length;
    const uint64_t m_max_count;
    std::optional<StringArrayCheck> m_check;
    const JobContext* m_job;
    uint32_t* m_slots;
    const uint64_t m_in_place;
    std::vector<uint32_t> m_overflow;  // elements in_place and on
    uint64_t m_count = 0;
    uint64_t m_start = 0;
    uint64_t m_end = 0;
    std::optional<uint64_t> m_first_invalid_utf8;
};

}  // namespace mlens
