// Descriptor-based directory access for the store: every directory is opened relative to its
// parent with O_NOFOLLOW, so a symlink swapped in along the way is refused, never followed.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/io/file_type.h"
#include "mlens/io/unique_fd.h"

namespace mlens {

// Opens directory `name` under `parent` (AT_FDCWD: a path) without following a final symlink.
// errno is kept from the failing call.
UniqueFd open_directory_at(int parent, const std::string& name);

// The names of a directory ("." and ".." left out), sorted by name, in one buffer.
struct DirectoryNames {
    std::string text;  // every name followed by a NUL
    std::vector<uint32_t> starts;  // sorted by name: where each name starts in `text`
    size_t size() const { return starts.size(); }
    const char* c_str(size_t i) const { return text.data() + starts[i]; }
    std::string_view name(size_t i) const { return c_str(i); }
};

// The names of an open directory (read from its start, each call), at most max_entries read; `truncated` tells whether more were
// there. When the directory cannot be read at all (or fails halfway), `error` gets errno; the
// names read before a failure are kept.
DirectoryNames read_directory_names(int dir, uint64_t max_entries, bool& truncated, int* error = nullptr);

// Every name of `names` fstatat'ed in `dir` without following links, a large directory's on two
// threads (in runs of names); `each` is called once per name, on the thread that stat'ed it,
// with the name's index, its stat and 0, or a zero stat and errno when it could not be stat'ed.
void stat_directory_names(int dir, const DirectoryNames& names, const std::function<void(size_t, const struct stat&, int)>& each);

struct DirEntry {
    std::string name;
    struct stat st {};  // lstat-style: a symlink is described as the link itself
    int stat_error = 0;  // errno when the entry could not be stat'ed (st is then zero)
};

// The entries of an open directory ("." and ".." left out), sorted by name, at most max_entries
// names read; `truncated` tells whether more were there. Each entry is fstatat'ed without following
// links (a large directory's on two threads; the result does not depend on it); entries that
// vanish meanwhile are left out (they count against max_entries all the same), entries that
// cannot be stat'ed for another reason (EACCES) are kept with stat_error. When the directory
// cannot be read at all, `error` gets errno.
std::vector<DirEntry> list_directory(int dir, uint64_t max_entries, bool& truncated, int* error = nullptr);

// Reads a whole regular file opened from `dir` without following symlinks, at most max_bytes;
// nullopt with errno set on failure. `too_large` is set (and nothing read) when the size at open
// exceeds max_bytes.
std::optional<std::string> read_small_file_at(int dir, const std::string& name, uint64_t max_bytes, bool& too_large, struct stat& st);

}  // namespace mlens
