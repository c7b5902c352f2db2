// Case-insensitive (ASCII) substring search, the rule every filter box and the tensor listing use.
#pragma once

#include <string_view>

namespace mlens {

bool contains_folded(std::string_view haystack, std::string_view needle);

}  // namespace mlens
