#include "posix_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "mlens/io/byte_source.h"

namespace mlens {

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
    errno = 0;
    while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        if (entries.size() >= max_entries) {
            truncated = true;
            break;
        }
        DirEntry entry{name, {}, 0};
        if (::fstatat(dir, name.c_str(), &entry.st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue;
            entry.stat_error = errno;
            entry.st = {};
        }
        entries.push_back(std::move(entry));
        errno = 0;
    }
    if (errno != 0 && error) *error = errno;
    ::closedir(d);
    std::sort(entries.begin(), entries.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
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
