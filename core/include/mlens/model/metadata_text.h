// How a metadata entry reads in tables and the inspector: format_value (escaped) plus the enum
// name for enum-valued keys ("15 (Q4_K_M)"), and the element count column.
#pragma once

#include <cstdint>
#include <string>

#include "mlens/model/model.h"

namespace mlens {

std::string metadata_value_text(const MetadataEntry& e, uint64_t max_items = 8, size_t max_chars = 160);
// Arrays: the element count; strings: the byte length ("12 B"); scalars: empty.
std::string metadata_count_text(const Value& v);
// The full value for the clipboard: strings exactly when they are valid UTF-8 (else escaped),
// arrays as their first `max_items` elements.
std::string metadata_copy_text(const MetadataEntry& e, uint64_t max_items = 1000);

}  // namespace mlens
