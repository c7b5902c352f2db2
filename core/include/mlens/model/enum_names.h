// Names of metadata values that llama.cpp stores as numbers but means as enums.
//
// Contract: enum_value_name returns a name for the value of a known enum-valued key, or nullopt
// (unknown key, non-integer value, or a number outside the enum, which the caller shows plainly):
//  - general.file_type                 llama_ftype ("Q4_K_M")
//  - <arch>.pooling_type               NONE MEAN CLS LAST RANK (-1 UNSPECIFIED)
//  - <arch>.rope.scaling.type          when stored as a number: NONE LINEAR YARN LONGROPE
//  - tokenizer.ggml.token_type         per element, see token_type_name
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mlens/model/value.h"

namespace mlens {

std::optional<std::string> enum_value_name(std::string_view key, const Scalar& value);

// llama_token_type: UNDEFINED NORMAL UNKNOWN CONTROL USER_DEFINED UNUSED BYTE; nullptr otherwise.
const char* token_type_name(int64_t type);

// True for keys whose array elements are token types.
bool is_token_type_key(std::string_view key);

}  // namespace mlens
