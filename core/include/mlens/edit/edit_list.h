// EditList: metadata edits staged for one model — set a key to a value, delete a key, rename a
// key — as the user gave them, typed against the model when they are planned (edit_plan.h).
//
// Contract:
//  - A set edit carries its value as text and, when the user named it (KEY:TYPE=VALUE), its type.
//    Without one the type is the key's type in the file, else its row in the GGUF key table
//    (key_types.h); a key with neither is refused (E_VALUE_TYPE: give KEY:TYPE=VALUE).
//  - value_from_text reads the text as that type: integers in decimal (a leading '-' only for
//    signed types), range-checked (E_RANGE names the type's range); FLOAT32/FLOAT64 as decimal
//    numbers that are finite in the type (E_RANGE beyond); BOOL as true/false/1/0; STRING as the
//    text itself, which must be valid UTF-8 (E_INVALID_UTF8); ARRAY[T] as a JSON array (strict
//    JSON, strict_json.h) of elements each read as T — strings for STRING elements, numbers or
//    true/false otherwise; nested arrays, objects and null are refused (E_NESTED_ARRAY,
//    E_VALUE_TYPE). Anything unreadable is E_VALUE_TYPE naming the text.
//  - parse_set_argument reads "KEY=VALUE" and "KEY:TYPE=VALUE" (TYPE as key_type_from_name reads
//    it; a ':' followed by no type name stays part of the key).
//  - parse_edits_json reads an edits file: one object with optional members
//      "set":    {"KEY" or "KEY:TYPE": VALUE, ...}   a JSON string is the value's text, any other
//                                                    JSON value (number, bool, array) its source text
//      "delete": ["KEY", ...]
//      "rename": {"KEY": "NEW", ...}
//    in strict JSON: a duplicate key anywhere is E_DUPLICATE_KEY, an unknown member E_INVALID.
//    Edits come out in that order: sets, deletes, renames, each in file order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/edit/key_types.h"
#include "mlens/result.h"

namespace mlens {

enum class MetadataEditKind { set, remove, rename };
const char* metadata_edit_kind_name(MetadataEditKind kind);  // "set", "delete", "rename"

struct Edit {
    MetadataEditKind kind = MetadataEditKind::set;
    std::string key;
    std::string new_key;  // rename
    std::string text;  // set: the value as text
    std::optional<KeyType> type;  // set: the type the user named

    static Edit set(std::string key, std::string text, std::optional<KeyType> type = std::nullopt);
    static Edit remove(std::string key);
    static Edit rename(std::string key, std::string new_key);
};

struct EditList {
    std::vector<Edit> edits;
    bool empty() const { return edits.empty(); }
};

Result<Value> value_from_text(std::string_view text, const KeyType& type);
Result<Edit> parse_set_argument(std::string_view argument);
Result<std::vector<Edit>> parse_edits_json(std::string_view text);

}  // namespace mlens
