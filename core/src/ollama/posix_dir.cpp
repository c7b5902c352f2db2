#include "posix_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mlens/io/byte_source.h"
#include "mlens/util/parallel.h"

namespace mlens {

namespace {

// A large directory's entries are stat'ed on two threads, in runs of this many names.
constexpr uint64_t kEntriesPerStatTask = 1024;
constexpr unsigned kStatThreads = 2;

}  // namespace

UniqueFd open_directory_at(int parent, const std::string& name) {
    int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    // Out of descriptors: an idle one of the file-source pool makes room.
    while (fd < 0 && (errno == EMFILE || errno == ENFILE) && release_idle_descriptor())
        fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return UniqueFd(fd);
}

std::vector<DirEntry> list_directory(int dir, uint64_t max_entries, bool& truncated, int* error) {
    truncated = false;
    if (error) *error = 0;
    std::vector<DirEntry> entries;
    auto fail = [&] {
        if (error) *error = errno;
        return entries;
    };
    // fdopendir takes ownership of its descriptor, so it gets a duplicate.
    int copy = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return fail();
    DIR* d = ::fdopendir(copy);
    if (!d) {
        int err = errno;
        ::close(copy);
        errno = err;
        return fail();
    }
    std::vector<std::string> names;
    errno = 0;
    while (dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        if (names.size() >= max_entries) {
            truncated = true;
            break;
        }
        names.emplace_back(e->d_name);
        errno = 0;
    }
    if (errno != 0 && error) *error = errno;
    ::closedir(d);
    std::sort(names.begin(), names.end());
    entries.resize(names.size());
    const uint64_t tasks = (names.size() + kEntriesPerStatTask - 1) / kEntriesPerStatTask;
    parallel_for(tasks, kStatThreads, [&](uint64_t task) {
        const size_t end = std::min(names.size(), static_cast<size_t>((task + 1) * kEntriesPerStatTask));
        for (size_t i = static_cast<size_t>(task * kEntriesPerStatTask); i < end; ++i) {
            DirEntry& entry = entries[i];
            entry.name = std::move(names[i]);
            if (::fstatat(dir, entry.name.c_str(), &entry.st, AT_SYMLINK_NOFOLLOW) != 0) {
                entry.stat_error = errno;
                entry.st = {};
            }
        }
        return true;
    });
    std::erase_if(entries, [](const DirEntry& e) { return e.stat_error == ENOENT; });
    return entries;
}

std::optional<std::string> read_small_file_at(int dir, const std::string& name, uint64_t max_bytes, bool& too_large, struct stat& st) {
    too_large = false;
    UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    while (!fd.valid() && (errno == EMFILE || errno == ENFILE) && release_idle_descriptor())
        fd = UniqueFd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return std::nullopt;
    if (::fstat(fd.get(), &st) != 0) return std::nullopt;
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return std::nullopt;
    }
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
        too_large = true;
        return std::nullopt;
    }
    // The file may grow after fstat: read at most max_bytes + 1 to notice.
    std::string text(static_cast<size_t>(st.st_size), '\0');
    size_t used = 0;
    char more[4096];
    while (true) {
        char* dst = used < text.size() ? text.data() + used : more;
        size_t room = used < text.size() ? text.size() - used : sizeof more;
        ssize_t got = ::read(fd.get(), dst, room);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return std::nullopt;
        if (got == 0) break;
        if (dst == more) {
            if (text.size() + static_cast<size_t>(got) > max_bytes) {
                too_large = true;
                return std::nullopt;
            }
            text.append(more, static_cast<size_t>(got));
        }
        used += static_cast<size_t>(got);
    }
    text.resize(std::min(used, text.size()));
    return text;
}

}  // namespace mlens
