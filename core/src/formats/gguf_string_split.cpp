#include "gguf_string_split.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "gguf_string_scan.h"
#include "util/thread_scratch.h"

namespace mlens {

namespace {

constexpr uint64_t kTailSpanBytes = (uint64_t{1} << 32) - StringArrayTail::kWindowBytes;  // offsets stay exact in 32 bits

// The window a thread reads tails into, kept for the thread's life (a pool thread runs many).
struct TailWindow {
    std::unique_ptr<uint8_t[]> bytes{new uint8_t[StringArrayTail::kWindowBytes]};  // not zero-filled: read into first
};
uint8_t* thread_window() { return thread_scratch<TailWindow>([] {}).bytes.get(); }

uint64_t load_length(const uint8_t* p) {
    uint64_t length;
    std::memcpy(&length, p, 8);
    return length;
}

}  // namespace

StringArrayTail::StringArrayTail(const ByteSource& source, uint64_t origin, uint64_t from, uint64_t max_length, uint64_t max_count,
                                 uint32_t* slots, uint64_t in_place, std::optional<StringArrayCheck> check, const JobContext* job)
    : m_source(source),
      m_origin(origin),
      m_from(from),
      m_max_length(max_length),
      m_max_count(max_count),
      m_check(std::move(check)),
      m_job(job),
      m_slots(slots),
      m_in_place(in_place) {}

// A position starts kConfirmElements elements in a row that lie in the window with lengths within
// the limit. A length field read from inside a text is the text's bytes: almost never a small
// number, and never for long in a row.
std::optional<uint64_t> StringArrayTail::find_start(const uint8_t* window, uint64_t size) const {
    const uint64_t last = std::min(size, kSearchBytes);
    for (uint64_t candidate = 0; candidate < last; ++candidate) {
        uint64_t p = candidate, n = 0;
        for (; n < kConfirmElements && size - p >= 8; ++n) {
            const uint64_t length = load_length(window + p);
            if (length > m_max_length || length > size - p - 8) break;
            p += 8 + length;
        }
        if (n == kConfirmElements) return candidate;
    }
    return std::nullopt;
}

void StringArrayTail::scan() {
    uint8_t* const window = thread_window();
    uint64_t at = m_from;
    const uint64_t source_end = m_source.size();
    while (m_count < m_max_count && at < source_end && !job_cancelled(m_job)) {
        const uint64_t available = std::min(kWindowBytes, source_end - at);
        if (!m_source.read(at, available, window)) return;
        uint64_t skip = 0;
        if (m_count == 0) {
            const std::optional<uint64_t> first = find_start(window, available);
            if (!first) return;
            skip = *first;
            m_start = at + skip;
        }
        const BufferedStrings buffer{window + skip, at + skip, available - skip, 8, false, m_origin, m_start + kTailSpanBytes};
        // The table's slots, then the overflow, grown by what the window can hold (8 bytes or more an element).
        uint32_t* out = m_slots + m_count;
        uint64_t room = m_in_place - std::min(m_count, m_in_place);
        if (room == 0) {
            const uint64_t used = m_count - m_in_place;
            room = std::min(m_max_count - m_count, buffer.size / 8 + 1);
            m_overflow.resize(used + room);
            out = m_overflow.data() + used;
        }
        const WindowScan scanned = scan_window(buffer, m_max_length, std::min(room, m_max_count - m_count), m_count, out,
                                               m_check ? &*m_check : nullptr, !m_first_invalid_utf8);
        if (scanned.first_invalid_utf8) m_first_invalid_utf8 = m_count + *scanned.first_invalid_utf8;
        m_count += scanned.count;
        at += skip + scanned.bytes;
        m_end = at;
        if (scanned.count == 0) return;
    }
}

void StringArrayTail::copy_to(uint32_t* out, uint64_t first, uint64_t n) const {
    const uint64_t from_slots = first < m_in_place ? std::min(n, m_in_place - first) : 0;
    std::memmove(out, m_slots + first, from_slots * sizeof(uint32_t));
    if (n > from_slots)
        std::memcpy(out + from_slots, m_overflow.data() + (first + from_slots - m_in_place), (n - from_slots) * sizeof(uint32_t));
}

std::optional<uint64_t> StringArrayTail::index_of(uint64_t offset) const {
    uint64_t low = 0, high = m_count;  // the first element starting at or after offset is in [low, high]
    while (low < high) {
        const uint64_t mid = low + (high - low) / 2;
        if (this->offset(mid) < offset)
            low = mid + 1;
        else
            high = mid;
    }
    if (low < m_count && this->offset(low) == offset) return low;
    return std::nullopt;
}

}  // namespace mlens
