// A whole text file read into memory, for inputs that are text by nature (the corpus of
// `mlens kld --text` and the GUI's Corpus view).
//
// Contract:
//  - read_text_file opens `path` once (O_NONBLOCK, so a FIFO cannot block the caller) and checks
//    the opened file: anything but a regular file is E_NOT_REGULAR naming what it is ("a FIFO",
//    "a directory", ...), a file larger than `max_bytes` is E_TOO_LARGE, an open or read failure is
//    E_NOT_FOUND / E_IO. A file that shrinks while it is read gives the bytes that were there.
//  - The bytes are returned as they are (no decoding, no newline conversion); messages escape the
//    path for display.
#pragma once

#include <cstdint>
#include <string>

#include "mlens/result.h"

namespace mlens {

// The limit `mlens kld` and the Corpus view put on a corpus text.
constexpr uint64_t kMaxCorpusTextBytes = 256ull << 20;

Result<std::string> read_text_file(const std::string& path, uint64_t max_bytes);

}  // namespace mlens
