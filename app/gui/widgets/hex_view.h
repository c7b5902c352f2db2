// HexView: a classic hex dump (offset, 16 bytes, ASCII) of bytes read from a file, with one
// highlighted byte range. Policy-free: it draws what it is given and reports nothing back but
// the hovered offset.
//
// Contract: `bytes` are the file's bytes starting at absolute offset `base`; rows hold 16 bytes
// (8, or 4, when the region is too narrow for them) counted from `base`. Bytes inside `highlight` get a background. Non-printable bytes show as '.' in
// the ASCII column. Returns the absolute offset of the byte under the mouse, if any.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <imgui.h>

#include "mlens/model/model.h"

namespace mlens {

std::optional<uint64_t> hex_view(const char* id, const std::vector<uint8_t>& bytes, uint64_t base,
                                 ByteRange highlight, ImFont* mono);

}  // namespace mlens
