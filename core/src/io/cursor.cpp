#include "mlens/io/cursor.h"

#include <algorithm>
#include <cstring>

#include "mlens/io/checked_math.h"

namespace mlens {

namespace {

// What a refill reads at least: a vocabulary or numeric array that a reader skips past (it scans
// the elements from its own buffer) is read again only this far.
constexpr uint64_t kRefillBytes = 64u << 10;

}  // namespace

Cursor::Cursor(const ByteSource& source, uint64_t start, bool swap_bytes) : m_source(source), m_pos(start), m_swap(swap_bytes) {}

const uint8_t* Cursor::peek_slow(uint64_t n) {
    if (n > remaining() || n > kWindowBytes) return nullptr;
    const uint64_t len = std::min(std::max(n, kRefillBytes), remaining());
    if (m_window.size() < len) m_window.resize(len);
    if (!m_source.read(m_pos, len, m_window.data())) {
        m_window_len = 0;
        return nullptr;
    }
    m_window_start = m_pos;
    m_window_len = len;
    return m_window.data();
}

bool Cursor::read_bytes(void* dst, uint64_t n) {
    if (n > remaining()) return false;
    if (n <= kWindowBytes) {
        const uint8_t* p = peek(n);
        if (!p) return false;
        if (n) std::memcpy(dst, p, n);
    } else if (!m_source.read(m_pos, n, dst)) {
        return false;
    }
    m_pos += n;
    return true;
}

bool Cursor::read_u8(uint8_t& v) { return read_bytes(&v, 1); }

bool Cursor::read_u16(uint16_t& v) {
    if (!read_bytes(&v, 2)) return false;
    if (m_swap) v = __builtin_bswap16(v);
    return true;
}

bool Cursor::read_u32(uint32_t& v) {
    if (!read_bytes(&v, 4)) return false;
    if (m_swap) v = __builtin_bswap32(v);
    return true;
}

bool Cursor::read_string(std::string& out, uint64_t n) {
    if (n > remaining()) return false;
    out.resize(n);
    return read_bytes(out.data(), n);
}

bool Cursor::seek(uint64_t position) {
    if (position > m_source.size()) return false;
    m_pos = position;
    return true;
}

}  // namespace mlens
