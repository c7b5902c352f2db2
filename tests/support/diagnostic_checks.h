// Assertions on a Model's diagnostics for the malformed-input cases (malformed-inputs.md X03):
// a rejection names its code, field path and absolute byte offset; an acceptance has no error,
// is not partial, and carries exactly the expected warning codes. Failures print every
// diagnostic of the Model. Also the tensor a test expects to find by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/model/model.h"

namespace mlens::test {

// Every diagnostic as the line `mlens check` prints, one per line.
std::string describe(const Model& m);

// The Model read from in-memory GGUF bytes (read_gguf with default limits).
Model read_gguf_bytes(std::vector<uint8_t> bytes);

const Diagnostic* first_error(const Model& m);
const Diagnostic* find_diagnostic(const Model& m, const std::string& code);

// The first error has exactly this code, field path and offset (nullopt: no offset applies).
void require_error(const Model& m, const std::string& code, const std::string& field, std::optional<uint64_t> offset);

// No error, not partial, and the warning codes are exactly `warnings` (order ignored).
void require_accepted(const Model& m, std::vector<std::string> warnings = {});

// The model has a warning with this code, field path and offset.
void require_warning(const Model& m, const std::string& code, const std::string& field, std::optional<uint64_t> offset);

// The tensor named `name` in `m`; fails the test when there is none.
const TensorInfo& tensor(const Model& m, const std::string& name);

// True when s holds no raw ESC, BEL or NUL byte and no UTF-8 bidi override U+202E.
bool display_safe(const std::string& s);

}  // namespace mlens::test
