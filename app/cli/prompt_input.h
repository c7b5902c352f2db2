// Where a prompt comes from on the command line: the text itself, a file (--prompt-file FILE),
// or standard input (the text "-").
//
// Contract: a prompt file must be a regular file (a FIFO or device is refused without opening
// it for a blocking read) of at most kMaxPromptBytes; standard input is read up to that many
// bytes, and one byte more is an error. Errors name the source and the limit.
#pragma once

#include <cstddef>
#include <string>

#include "mlens/result.h"

namespace mlens::cli {

inline constexpr size_t kMaxPromptBytes = size_t{1} << 20;

Result<std::string> read_prompt_file(const std::string& path);
Result<std::string> read_prompt_stdin();

// The prompt of a command given `text` (may be "-") and `file` (may be empty); the caller has
// made sure at most one of them is set.
Result<std::string> resolve_prompt(const std::string& text, const std::string& file);

}  // namespace mlens::cli
