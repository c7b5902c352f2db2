// HexView: a classic hex dump (offset, 16 bytes, ASCII) of a whole file, read through a callback
// as it scrolls, with one highlighted byte range. Policy-free: it draws what the callback gives
// and reports nothing back but the hovered offset.
//
// Contract: rows hold 16 bytes (8, or 4, when the region is too narrow for them) counted from
// the start of the file; the view reads only the rows it shows (plus the 7 bytes after them for
// the hover tooltip's u64), and reads again only when they change. It fills the height left in
// the window (at least kHexMinRows rows) and scrolls by the mouse wheel (3 rows a notch), Page
// Up/Down and Home/End while hovered, and its own scrollbar, whose 64-bit position reaches every
// row of any file. Bytes inside `highlight` get a background. Non-printable bytes show as '.' in
// the ASCII column. A read that gives fewer bytes than asked shows the rows it gave. Returns the
// absolute offset of the byte under the mouse, if any.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <imgui.h>

#include "mlens/model/model.h"

namespace mlens {

constexpr int kHexMinRows = 8;

// Reads up to `length` bytes of the file from `offset` into `out`; returns how many it read
// (fewer at the end of the file or on an error).
using HexReader = std::function<uint64_t(uint64_t offset, uint64_t length, uint8_t* out)>;

// Where one hex view is scrolled to and the bytes it last read; owned by its caller.
class HexViewState {
public:
    // Scrolls so that `offset`'s row is the first shown, and forgets the bytes read (a new file
    // or new contents).
    void show(uint64_t offset) {
        m_scroll_to = offset;
        m_bytes.clear();
        m_asked = {};
    }
    // The offset of the first byte of the first row shown.
    uint64_t top() const { return m_top; }

private:
    friend std::optional<uint64_t> hex_view(const char*, HexViewState&, uint64_t, const HexReader&, ByteRange, ImFont*);
    uint64_t m_top = 0;
    std::optional<uint64_t> m_scroll_to;
    std::vector<uint8_t> m_bytes;  // what the read of m_asked gave
    ByteRange m_asked;
};

std::optional<uint64_t> hex_view(const char* id, HexViewState& state, uint64_t file_size, const HexReader& read, ByteRange highlight,
                                 ImFont* mono);

}  // namespace mlens
