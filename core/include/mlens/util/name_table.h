// An enum's names as one table, read both ways: the name of a value and the value of a name.
//
// Contract:
//  - name_of(rows, value, missing) is the name of the first row holding `value`, `missing` when
//    no row does (a value cast from outside the enum).
//  - value_of(rows, name) is the value of the first row whose name equals `name` exactly, nullopt
//    when none does.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace mlens {

template <typename Enum>
struct NameRow {
    Enum value;
    const char* name;
};

template <typename Enum, size_t N>
constexpr const char* name_of(const NameRow<Enum> (&rows)[N], Enum value, const char* missing = "?") {
    for (const NameRow<Enum>& r : rows)
        if (r.value == value) return r.name;
    return missing;
}

template <typename Enum, size_t N>
constexpr std::optional<Enum> value_of(const NameRow<Enum> (&rows)[N], std::string_view name) {
    for (const NameRow<Enum>& r : rows)
        if (name == r.name) return r.value;
    return std::nullopt;
}

}  // namespace mlens
