// The GGUF types of well-known metadata keys, for a key an edit adds that the file does not have.
//
// Contract:
//  - One table of rows {key, type, element type}: general.*, tokenizer.* and the per-architecture
//    hyperparameters as gguf-py writes them (its GGUF writer's types; llama.cpp reads the same).
//  - A row whose key starts with "{arch}." matches that suffix after any architecture prefix
//    (llama.context_length, qwen2.context_length); an exact row wins over an {arch} row.
//  - known_key_type is nullopt for a key no row matches: its type must then be given.
#pragma once

#include <optional>
#include <string_view>

#include "mlens/model/value.h"

namespace mlens {

struct KeyType {
    ValueType type = ValueType::string;
    std::optional<ValueType> element;  // ARRAY only
};

std::optional<KeyType> known_key_type(std::string_view key);

// "UINT32", "STRING", "ARRAY[INT32]" (format_type's spelling, case-insensitive) as a KeyType;
// nullopt for any other text, ARRAY without its element type, and nested arrays.
std::optional<KeyType> key_type_from_name(std::string_view name);

}  // namespace mlens
