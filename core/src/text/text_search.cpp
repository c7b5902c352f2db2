#include "mlens/text/text_search.h"

#include <algorithm>

namespace mlens {

bool contains_folded(std::string_view haystack, std::string_view needle) {
    auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (needle.size() > haystack.size()) return false;
    auto it =
        std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [&](char a, char b) { return fold(a) == fold(b); });
    return it != haystack.end();
}

}  // namespace mlens
