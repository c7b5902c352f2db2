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
constexpr size_t kDirectoryReadBytes = 256 * 1024;  // what one getdents64 call may fill

// The names in strcmp's order (std::string's), compared by the 8 bytes after the prefix every
// name shares (a blob store's "sha256-") as one big-endian number, and only on a tie by the rest.
void sort_names(DirectoryNames& names) {
    if (names.starts.empty()) return;
    const char* text = names.text.data();
    size_t shared = std::strlen(text + names.starts[0]);
    for (uint32_t start : names.starts) {
        size_t same = 0;
        while (same < shared && text[start + same] == text[names.starts[0] + same]) ++same;
        shared = same;
    }
    struct Key {
        uint64_t bytes;  // up to 8 bytes after the shared prefix, big-endian, zero past the name's end
        uint32_t start;
    };
    std::vector<Key> keys;
    keys.reserve(names.starts.size());
    for (uint32_t start : names.starts) {
        uint64_t bytes = 0;
        const char* p = text + start + shared;
        size_t n = 0;
        for (; n < 8 && p[n] != '\0'; ++n) bytes = (bytes << 8) | static_cast<unsigned char>(p[n]);
        keys.push_back({n == 0 ? 0 : bytes << (8 * (8 - n)), start});  // a shift by 64 is undefined
    }
    std::sort(keys.begin(), keys.end(), [text, shared](const Key& a, const Key& b) {
        if (a.bytes != b.bytes) return a.bytes < b.bytes;
        // Equal keys ending before their 8th byte are the same name; else the rest decides.
        if ((a.bytes & 0xFF) == 0) return false;
        return std::strcmp(text + a.start + shared + 8, text + b.start + shared + 8) < 0;
    });
    for (size_t i = 0; i < keys.size(); ++i) names.starts[i] = keys[i].start;
}

}  // namespace

UniqueFd open_directory_at(int parent, const std::string& name) {
    int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    // Out of descriptors: an idle one of the file-source pool makes room.
    while (fd < 0 && (errno == EMFILE || errno == ENFILE) && release_idle_descriptor())
        fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return UniqueFd(fd);
}

DirectoryNames read_directory_names(int dir, uint64_t max_entries, bool& truncated, int* error) {
    truncated = false;
    if (error) *error = 0;
    DirectoryNames out;
    // A duplicate reads (as a DIR stream would), from the start whatever was read before.
    UniqueFd copy(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
    if (!copy.valid() || ::lseek(copy.get(), 0, SEEK_SET) != 0) {
        if (error) *error = errno;
        return out;
    }
    std::vector<char> buffer(kDirectoryReadBytes);
    while (!truncated) {
        const ssize_t got = ::getdents64(copy.get(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            if (error) *error = errno;
            break;
        }
        if (got == 0) break;
        for (size_t at = 0; at < static_cast<size_t>(got);) {
            const auto* e = reinterpret_cast<const dirent64*>(buffer.data() + at);
            at += e->d_reclen;
            if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
            if (out.starts.size() >= max_entries) {
                truncated = true;
                break;
            }
            out.starts.push_back(static_cast<uint32_t>(out.text.size()));
            out.text.append(e->d_name, std::strlen(e->d_name) + 1);
        }
    }
    sort_names(out);
    return out;
}

void stat_directory_names(int dir, const DirectoryNames& names, const std::function<void(size_t, const struct stat&, int)>& each) {
    const uint64_t tasks = (names.size() + kEntriesPerStatTask - 1) / kEntriesPerStatTask;
    parallel_for(tasks, kStatThreads, [&](uint64_t task) {
        const size_t end = std::min(names.size(), static_cast<size_t>((task + 1) * kEntriesPerStatTask));
        for (size_t i = static_cast<size_t>(task * kEntriesPerStatTask); i < end; ++i) {
            struct stat st {};
            const int err = ::fstatat(dir, names.c_str(i), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
            if (err != 0) st = {};
            each(i, st, err);
        }
        return true;
    });
}

std::vector<DirEntry> list_directory(int dir, uint64_t max_entries, bool& truncated, int* error) {
    const DirectoryNames names = read_directory_names(dir, max_entries, truncated, error);
    std::vector<DirEntry> entries(names.size());
    stat_directory_names(dir, names, [&](size_t i, const struct stat& st, int err) {
        entries[i] = {std::string(names.name(i)), st, err};
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
