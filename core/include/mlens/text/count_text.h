// A count with its noun in the right number: "1 tensor", "21 tensors", "0 errors".
//
// Contract: count_text(n, one, many) is the decimal n, a space, and `one` when n == 1, else `many`.
#pragma once

#include <cstdint>
#include <string>

namespace mlens {

inline std::string count_text(uint64_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace mlens
