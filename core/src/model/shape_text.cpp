#include "mlens/model/shape_text.h"

#include <string_view>

namespace mlens {

namespace {

struct ShapeFormat {
    std::string_view open, separator, close, no_dimensions;
    bool slowest_first;
};

ShapeFormat format_of(ShapeStyle style) {
    switch (style) {
        case ShapeStyle::bracketed:
            return {"[", ", ", "]", "[]", false};
        case ShapeStyle::row_major:
            return {"[", ", ", "]", "[]", true};
        case ShapeStyle::times:
            return {"", " \xC3\x97 ", "", "(scalar)", false};
        case ShapeStyle::plain_x:
            return {"", " x ", "", "scalar", false};
    }
    return {"[", ", ", "]", "[]", false};
}

}  // namespace

std::string shape_text(std::span<const uint64_t> ne, ShapeStyle style) {
    const ShapeFormat f = format_of(style);
    if (ne.empty()) return std::string(f.no_dimensions);
    std::string out(f.open);
    for (size_t k = 0; k < ne.size(); ++k) {
        if (k) out += f.separator;
        out += std::to_string(f.slowest_first ? ne[ne.size() - 1 - k] : ne[k]);
    }
    return out += f.close;
}

}  // namespace mlens
