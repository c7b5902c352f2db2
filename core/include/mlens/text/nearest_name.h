// The nearest of a few known names to a mistyped one, for "did you mean" hints.
//
// Contract: edit_distance is the Levenshtein distance (insertions, deletions, substitutions of
// bytes). nearest_name returns the candidate with the smallest distance to `typed` when that
// distance is at most a third of the longer word's length (at least 1), rounded down, or the
// candidate that starts with `typed`; ties go to the earlier candidate; nullopt when none is close.
// did_you_mean is "; did you mean NAME?" for that candidate (escaped for display), "" for none.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlens {

size_t edit_distance(std::string_view a, std::string_view b);
std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& candidates);
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace mlens
