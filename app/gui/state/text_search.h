// Case-insensitive (ASCII) substring search, the rule every filter box in the app uses.
#pragma once

#include <string_view>

namespace mlens {

bool contains_folded(std::string_view haystack, std::string_view needle);

}  // namespace mlens
