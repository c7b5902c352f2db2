// The complete JSON description of a Model (`mlens dump --json`, the app's JSON export).
//
// Shape: {"format", "files":[{path,size,version,big_endian,alignment,data_start}],
//  "metadata":[{"key","type","element_type"?,"count"?,"value","offset"}],
//  "tensors":[{"name","type","type_id","ne":[...GGUF order],"offset","relative_offset","n_bytes",
//  "n_elements","file"}], "diagnostics":[{severity,code,field,offset,message,file}], "partial"}.
// Arrays carry all elements when max_items is UINT64_MAX, else the first max_items and "count".
#pragma once

#include <nlohmann/json.hpp>

#include "mlens/model/model.h"

namespace mlens {

nlohmann::json model_to_json(const Model& model, uint64_t max_items);
nlohmann::json diagnostic_to_json(const Diagnostic& d);
nlohmann::json tensor_to_json(const TensorInfo& t);

// Serializes JSON built from file data: invalid UTF-8 becomes U+FFFD instead of throwing.
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace mlens
