#include "mlens/text/natural_order.h"

namespace mlens {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

size_t run_end(std::string_view s, size_t i) {
    const bool digits = is_digit(s[i]);
    while (i < s.size() && is_digit(s[i]) == digits) ++i;
    return i;
}

// -1, 0, 1 for two runs of digits by value, then by length.
int compare_numbers(std::string_view x, std::string_view y) {
    const size_t xs = x.find_first_not_of('0'), ys = y.find_first_not_of('0');
    const std::string_view xv = xs == std::string_view::npos ? std::string_view() : x.substr(xs);
    const std::string_view yv = ys == std::string_view::npos ? std::string_view() : y.substr(ys);
    if (xv.size() != yv.size()) return xv.size() < yv.size() ? -1 : 1;
    if (int c = xv.compare(yv)) return c < 0 ? -1 : 1;
    if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
    return 0;
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const size_t ie = run_end(a, i), je = run_end(b, j);
        const std::string_view x = a.substr(i, ie - i), y = b.substr(j, je - j);
        int c = is_digit(x[0]) && is_digit(y[0]) ? compare_numbers(x, y) : x.compare(y);
        if (c != 0) return c < 0;
        i = ie;
        j = je;
    }
    return a.size() - i < b.size() - j;
}

}  // namespace mlens
