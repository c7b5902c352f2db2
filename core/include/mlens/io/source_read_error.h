// The error of a read that a ByteSource refused, with the reason the source gives.
//
// Contract: source_read_error(source, field, offset, what) is an Error whose message is `what`
// then ": " and the source's read_failure(). A failure that starts with an error code's name
// ("E_DOWNLOAD_LIMIT: ...", as a remote source words it) gives that code and the rest of the text;
// any other failure is E_IO with its text, and a source that gives no reason is E_IO "the read
// failed".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mlens/io/byte_source.h"
#include "mlens/result.h"

namespace mlens {

Error source_read_error(const ByteSource& source, std::string field, std::optional<uint64_t> offset, const std::string& what);

}  // namespace mlens
