// Checks of what GGUF metadata means, for the keys the app and the CLI read: the tokenizer
// arrays (types, lengths, ids in range, merges, byte tokens) and split metadata. Everything found
// here is a warning naming the key (malformed-inputs.md G57, G58): the file is valid GGUF, but a
// loader or a view would misread it. Viewers must still check before indexing.
#pragma once

#include "mlens/formats/gguf_limits.h"
#include "mlens/model/model.h"

namespace mlens {

void check_gguf_semantics(Model& model, const GgufLimits& limits);

// Parses a byte token "<0xNN>" strictly (exactly two upper- or lower-case hex digits).
bool parse_byte_token(std::string_view piece, uint8_t& byte);

}  // namespace mlens
