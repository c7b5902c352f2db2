#include "mlens/model/metadata_text.h"

#include <algorithm>

#include "mlens/model/enum_names.h"
#include "mlens/model/value_format.h"
#include "mlens/text/escape.h"

namespace mlens {

std::string metadata_value_text(const MetadataEntry& e, uint64_t max_items, size_t max_chars) {
    const Value& v = e.value;
    if (v.is_array() && v.array && is_token_type_key(e.key) && value_type_is_integer(v.array->element_type)) {
        const ArrayIndex& a = *v.array;
        std::string out = "[" + std::string(value_type_name(a.element_type)) + " \xC3\x97 " + std::to_string(a.count) + "]";
        uint64_t n = std::min(a.count, max_items);
        for (uint64_t i = 0; i < n; ++i) {
            Scalar s = a.scalar_at(i);
            const char* name = token_type_name(s.as_int());
            out += (i ? ", " : " ") + (name ? std::string(name) : s.to_string());
        }
        if (n < a.count) out += ", \xE2\x80\xA6";
        return out;
    }
    std::string text = format_value(e.value, max_items, max_chars);
    if (!e.value.is_string() && !e.value.is_array())
        if (auto name = enum_value_name(e.key, e.value.scalar)) text += " (" + *name + ")";
    return text;
}

std::string metadata_count_text(const Value& v) {
    if (v.is_array() && v.array) return std::to_string(v.array->count);
    if (v.is_string()) return std::to_string(v.string_length()) + " B";
    return {};
}

std::string metadata_copy_text(const MetadataEntry& e, uint64_t max_items) {
    if (e.value.is_string()) {
        std::string s = e.value.string_value(16u << 20);
        return utf8_valid(s) ? s : escape_for_display(s, SIZE_MAX);
    }
    return metadata_value_text(e, max_items, SIZE_MAX);
}

}  // namespace mlens
