// Names in the order people count them: "tensors[2]" before "tensors[10]", "blk.9" before "blk.10".
//
// Contract: natural_less(a, b) compares the texts run by run, a run being a maximal sequence of
// ASCII decimal digits or a maximal sequence of other bytes. Two digit runs compare by value
// (leading zeros ignored; at equal values the run with fewer leading zeros first); any other pair
// of runs compares byte by byte. A text that is a prefix of the other in runs comes first. It is a
// strict weak order: equal texts are never less than each other.
#pragma once

#include <string_view>

namespace mlens {

bool natural_less(std::string_view a, std::string_view b);

}  // namespace mlens
