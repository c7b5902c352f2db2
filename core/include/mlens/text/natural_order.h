// Names in the order people count: "tensors[2]" before "tensors[10]", "blk.9" before "blk.10".
//
// Contract: natural_less(a, b) compares the texts piece by piece, a piece being a run of ASCII
// decimal digits or a run of anything else; two digit runs compare by their value (leading zeros
// ignored; equal values then by length, fewer zeros first), everything else byte by byte. It is a
// strict weak order, and equal texts are never less than each other.
#pragma once

#include <string_view>

namespace mlens {

bool natural_less(std::string_view a, std::string_view b);

}  // namespace mlens
