#include "mlens/text/natural_order.h"

namespace mlens {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The end of the run starting at `from`.
size_t run_end(std::string_view s, size_t from) {
    const bool digits = is_digit(s[from]);
    size_t i = from;
    while (i < s.size() && is_digit(s[i]) == digits) ++i;
    return i;
}

std::string_view without_leading_zeros(std::string_view digits) {
    const size_t first = digits.find_first_not_of('0');
    return first == std::string_view::npos ? std::string_view() : digits.substr(first);
}

// <0, 0, >0 as digit run x is below, equal to or above y.
int compare_digit_runs(std::string_view x, std::string_view y) {
    const std::string_view xv = without_leading_zeros(x), yv = without_leading_zeros(y);
    if (xv.size() != yv.size()) return xv.size() < yv.size() ? -1 : 1;
    if (const int c = xv.compare(yv)) return c;
    if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
    return 0;
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const size_t ie = run_end(a, i), je = run_end(b, j);
        const std::string_view x = a.substr(i, ie - i), y = b.substr(j, je - j);
        const int c = is_digit(x.front()) && is_digit(y.front()) ? compare_digit_runs(x, y) : x.compare(y);
        if (c != 0) return c < 0;
        i = ie;
        j = je;
    }
    return a.size() - i < b.size() - j;
}

}  // namespace mlens
