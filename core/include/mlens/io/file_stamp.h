// FileStamp: the identity of a file as ModelLens caches answers about it (cache_database.h) and
// as a file source remembers what it opened (byte_source.h).
//
// Contract: device, inode, size and the modification and change times in nanoseconds. Two stamps
// are equal only for the same file with the same content as far as the kernel tells: a touched,
// truncated, replaced or recreated file (inode reuse gives a new change time) has another stamp.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

namespace mlens {

struct FileStamp {
    uint64_t device = 0, inode = 0, size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileStamp&) const = default;
};
FileStamp file_stamp(const struct stat& st);
// The identity of the file at `path` (stat, links followed); nullopt when it cannot be stat'ed.
std::optional<FileStamp> file_stamp(const std::string& path);

}  // namespace mlens
