#include "mlens/text/nearest_name.h"

#include <algorithm>

#include "mlens/text/escape.h"

namespace mlens {

size_t edit_distance(std::string_view a, std::string_view b) {
    // One row of the dynamic-programming table at a time.
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    size_t best_distance = 0;
    for (const std::string& c : candidates) {
        const size_t d = edit_distance(typed, c);
        const size_t allowed = std::max<size_t>(1, std::max(typed.size(), c.size()) / 3);
        if (d > allowed && !(typed.size() > 0 && c.starts_with(typed))) continue;
        if (!best || d < best_distance) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
    const std::optional<std::string> near = nearest_name(typed, candidates);
    return near ? "; did you mean " + escape_for_display(*near) + "?" : std::string();
}

}  // namespace mlens
