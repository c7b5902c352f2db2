// Text and JSON renderings of metadata values, shared by the CLI and the app.
//
// Contract: every string taken from a file is escaped (text/escape.h) in text renderings; JSON
// renderings carry the exact bytes; serialize them with json_text() (model_json.h), which escapes
// control characters and replaces invalid UTF-8 by U+FFFD so the output stays valid JSON. Arrays are rendered with at most
// `max_items` elements (UINT64_MAX = all), long strings cut at `max_chars` in text form.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "mlens/model/value.h"

namespace mlens {

// "llama", "32000", "[STRING × 32000] <unk>, <s>, </s>, …"
std::string format_value(const Value& v, uint64_t max_items = 8, size_t max_chars = 120);
// The type as shown in tables: "STRING", "ARRAY[FLOAT32]".
std::string format_type(const Value& v);

nlohmann::json scalar_to_json(const Scalar& s);
nlohmann::json value_to_json(const Value& v, uint64_t max_items);

}  // namespace mlens
