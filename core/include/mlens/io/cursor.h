// Cursor: a sequential, buffered, bounds-checked reader over a ByteSource.
//
// Contract: every read either succeeds completely or returns false and leaves the position
// unchanged; nothing is read past the source's end. Multi-byte integers are little-endian unless
// the cursor was created with swap_bytes (big-endian files). The buffer window is bounded
// (kWindowBytes), so memory does not depend on any length read from the input. A refill reads
// 64 KiB, or what the peek needs when that is more, so a value skipped over is mostly not read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlens/io/byte_source.h"

namespace mlens {

class Cursor {
public:
    static constexpr uint64_t kWindowBytes = 1u << 20;

    Cursor(const ByteSource& source, uint64_t start, bool swap_bytes = false);

    uint64_t position() const { return m_pos; }
    uint64_t remaining() const { return m_source.size() - m_pos; }
    bool swap_bytes() const { return m_swap; }
    void set_swap_bytes(bool swap) { m_swap = swap; }

    bool read_u8(uint8_t& v);
    bool read_u16(uint16_t& v);
    bool read_u32(uint32_t& v);
    bool read_u64(uint64_t& v) {
        const uint8_t* p = peek(8);
        if (!p) return false;
        __builtin_memcpy(&v, p, 8);
        if (m_swap) v = __builtin_bswap64(v);
        m_pos += 8;
        return true;
    }
    bool read_bytes(void* dst, uint64_t n);
    // Reads n bytes into out (n must already be checked against a cap by the caller).
    bool read_string(std::string& out, uint64_t n);
    bool skip(uint64_t n) {
        if (n > remaining()) return false;
        m_pos += n;
        return true;
    }
    bool seek(uint64_t position);

    // Makes [position, position+n) available in the window and returns a pointer to it, or
    // nullptr if n > kWindowBytes or the range runs past the end. Does not advance.
    const uint8_t* peek(uint64_t n) {
        if (m_pos >= m_window_start && n <= m_window_len && m_pos - m_window_start <= m_window_len - n)
            return m_window.data() + (m_pos - m_window_start);
        return peek_slow(n);
    }

private:
    const uint8_t* peek_slow(uint64_t n);

    const ByteSource& m_source;
    uint64_t m_pos;
    bool m_swap;
    std::vector<uint8_t> m_window;
    uint64_t m_window_start = 0;
    uint64_t m_window_len = 0;
};

}  // namespace mlens
