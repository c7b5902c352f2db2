#include "mlens/model/shape_text.h"

namespace mlens {

namespace {

struct ShapeFormat {
    std::string_view open, separator, close, no_dimensions;
};

ShapeFormat format_of(ShapeStyle style) {
    switch (style) {
        case ShapeStyle::bracketed:
            return {"[", ", ", "]", "[]"};
        case ShapeStyle::times:
            return {"", " \xC3\x97 ", "", "(scalar)"};
        case ShapeStyle::plain_x:
            return {"", " x ", "", "scalar"};
    }
    return {"[", ", ", "]", "[]"};
}

}  // namespace

ShapeOrder shape_order(Format format) { return format == Format::safetensors ? ShapeOrder::slowest_first : ShapeOrder::fastest_first; }

const char* shape_order_name(ShapeOrder order) { return order == ShapeOrder::slowest_first ? "slowest_first" : "fastest_first"; }

const char* shape_order_label(ShapeOrder order) { return order == ShapeOrder::slowest_first ? "slowest first" : "ne"; }

std::string shape_header(std::string_view title, ShapeOrder order) {
    return std::string(title) + " (" + shape_order_label(order) + ")";
}

std::vector<uint64_t> shape_in_order(std::span<const uint64_t> ne, ShapeOrder order) {
    if (order == ShapeOrder::slowest_first) return {ne.rbegin(), ne.rend()};
    return {ne.begin(), ne.end()};
}

std::string shape_text(std::span<const uint64_t> ne, ShapeStyle style, ShapeOrder order) {
    const ShapeFormat f = format_of(style);
    if (ne.empty()) return std::string(f.no_dimensions);
    std::string out(f.open);
    const std::vector<uint64_t> dims = shape_in_order(ne, order);
    for (size_t k = 0; k < dims.size(); ++k) {
        if (k) out += f.separator;
        out += std::to_string(dims[k]);
    }
    return out += f.close;
}

}  // namespace mlens
