#include "mlens/model/value_format.h"

#include <cmath>

#include "mlens/text/escape.h"

namespace mlens {

std::string format_type(const Value& v) {
    if (v.is_array() && v.array) return std::string("ARRAY[") + value_type_name(v.array->element_type) + "]";
    return value_type_name(v.type);
}

std::string format_value(const Value& v, uint64_t max_items, size_t max_chars) {
    if (v.is_string()) return escape_for_display(v.string_value(max_chars * 4 + 4), max_chars);
    if (!v.is_array()) return v.scalar.to_string();
    const ArrayIndex& a = *v.array;
    std::string out = "[" + std::string(value_type_name(a.element_type)) + " × " + std::to_string(a.count) + "]";
    uint64_t n = std::min(a.count, max_items);
    for (uint64_t i = 0; i < n; ++i) {
        out += i ? ", " : " ";
        if (a.element_type == ValueType::string)
            out += escape_for_display(a.string_at(i, 256), 40);
        else
            out += a.scalar_at(i).to_string();
    }
    if (n < a.count) out += ", …";
    return out;
}

nlohmann::json scalar_to_json(const Scalar& s) {
    switch (s.type) {
        case ValueType::f32:
        case ValueType::f64: {
            double d = s.as_double();
            if (std::isfinite(d)) return d;
            return std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf");
        }
        case ValueType::boolean:
            return s.bits != 0;
        case ValueType::i8:
        case ValueType::i16:
        case ValueType::i32:
        case ValueType::i64:
            return s.as_int();
        default:
            return s.bits;
    }
}

nlohmann::json value_to_json(const Value& v, uint64_t max_items) {
    if (v.is_string()) return v.string_value();
    if (!v.is_array()) return scalar_to_json(v.scalar);
    const ArrayIndex& a = *v.array;
    nlohmann::json items = nlohmann::json::array();
    uint64_t n = std::min(a.count, max_items);
    if (a.element_type == ValueType::string) {
        a.for_each_string(0, UINT64_MAX, [&](uint64_t i, std::string_view s) {
            if (i >= n) return false;
            items.push_back(std::string(s));
            return true;
        });
    } else {
        for (uint64_t i = 0; i < n; ++i) items.push_back(scalar_to_json(a.scalar_at(i)));
    }
    return items;
}

}  // namespace mlens
