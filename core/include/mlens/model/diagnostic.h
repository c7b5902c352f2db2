// Diagnostic: one thing a reader found wrong or unusual in a file.
//
// Contract: errors are violations of the format (the file is damaged or hostile, or a loader
// would refuse it for that reason); warnings are valid-but-unusual or not loadable by the pinned
// llama.cpp (malformed-inputs.md C9). The code is one of the names in malformed-inputs.md A3
// (E_* / W_*). offset is absolute in the file named by `file` (index into Model::files).
// Messages are already escaped for display. The GGUF layout checks' rows about one tensor (its
// offset, alignment, bounds, overlap, packed layout) also name it by its index in Model::tensors
// (`tensor`) beside their field ("tensors[i]", i among its file's tensors), so that nothing reads
// the index back out of the text. The index holds in the Model the reader filled (and the one a
// split model's shard joins); JSON does not keep it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mlens/result.h"

namespace mlens {

enum class Severity { warning, error };

struct Diagnostic {
    Severity severity = Severity::error;
    std::string format;  // "GGUF", "safetensors", "store"
    ErrorCode code = ErrorCode::E_INVALID;
    std::string field;
    std::optional<uint64_t> offset;
    std::string message;
    uint32_t file = 0;
    // The tensor it is about (index into Model::tensors), where it is about one.
    std::optional<uint64_t> tensor = std::nullopt;

    // "error: GGUF E_CODE field offset=N: message" — the line `mlens check` prints.
    std::string to_line() const;
    static Diagnostic from_error(const Error& e, std::string format, uint32_t file = 0);
};

}  // namespace mlens
