// Checks of what GGUF metadata means, for the keys the app and the CLI read: the tokenizer
// arrays (types, lengths, ids in range, merges, byte tokens), split metadata, and the
// hyperparameters on which the pinned llama.cpp aborts instead of refusing the file (W_LLAMA_ABORT,
// from the table in formats/llama_asserts.h). Everything found here is a warning naming
// the key (malformed-inputs.md G57, G58): the file is valid GGUF, but a loader or a view would
// misread it. Viewers must still check before indexing.
#pragma once

#include <memory>
#include <string_view>

#include "mlens/formats/gguf_limits.h"
#include "mlens/model/model.h"

namespace mlens {

void check_gguf_semantics(Model& model, const GgufLimits& limits);

// A check run on each element of a string array while the reader indexes it, so that 100k-1M
// element vocabularies are scanned once (tokenizer.ggml.tokens: byte tokens must be exactly
// <0xNN>; tokenizer.ggml.merges: two parts separated by a space).
class StringArrayCheck {
public:
    virtual ~StringArrayCheck() = default;
    // Sees element `index`, cut to at most kMaxVisitBytes bytes.
    virtual void visit(uint64_t index, std::string_view element) = 0;
    // Adds the warning, if any, about entry `e` to the model.
    virtual void finish(Model& model, const MetadataEntry& e) = 0;
    static constexpr uint64_t kMaxVisitBytes = 4096;
};

// The check for a key, or nullptr when its elements need none.
std::unique_ptr<StringArrayCheck> string_array_check_for(std::string_view key);

// Parses a byte token "<0xNN>" strictly (exactly two upper- or lower-case hex digits).
bool parse_byte_token(std::string_view piece, uint8_t& byte);

}  // namespace mlens
