// Counts with their noun in the right number, for every text the app and the command line tool
// print: "1 tensor", "2 tensors", "0 tensors".
//
// Contract:
//  - noun_for(n, one, many) is `one` when n == 1 and `many` otherwise; an empty `many` means
//    `one` followed by "s" (pass `many` for irregular forms: "entry", "entries"; or phrases whose
//    verb agrees: "row is", "rows are").
//  - plural(n, one, many) is the decimal count, one space, and noun_for(n, one, many).
//  - Counts shown with digit separators (the app's "12,345") pass their own text of the number:
//    counted_as(text, n, one, many) is `text`, one space, and noun_for(n, one, many).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mlens {

std::string noun_for(uint64_t n, std::string_view one, std::string_view many = {});
std::string plural(uint64_t n, std::string_view one, std::string_view many = {});
std::string counted_as(std::string_view number_text, uint64_t n, std::string_view one, std::string_view many = {});

}  // namespace mlens
