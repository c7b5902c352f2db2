// What kind of file a stat mode names, as text for messages: "a regular file", "a directory",
// "a symlink" (from lstat), "a FIFO", "a socket", "a character device", "a block device", else
// "not a regular file". One wording for every reader, writer and check that refuses a file.
#pragma once

#include <sys/types.h>

namespace mlens {

const char* file_type_text(mode_t mode);

}  // namespace mlens
