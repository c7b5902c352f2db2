#include "mlens/io/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "mlens/io/file_type.h"
#include "mlens/io/unique_fd.h"
#include "mlens/text/escape.h"

namespace mlens {

Result<std::string> read_text_file(const std::string& path, uint64_t max_bytes) {
    const std::string shown = escape_for_display(path);
    const UniqueFd file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    const int fd = file.get();
    if (fd < 0) {
        const ErrorCode code = errno == ENOENT ? ErrorCode::E_NOT_FOUND : ErrorCode::E_IO;
        return Error{code, "", std::nullopt, shown + ": could not be opened"};
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Error{ErrorCode::E_IO, "", std::nullopt, shown + ": could not be read"};
    if (!S_ISREG(st.st_mode))
        return Error{ErrorCode::E_NOT_REGULAR, "", std::nullopt, shown + ": " + file_type_text(st.st_mode) + ", not a regular file"};
    if (static_cast<uint64_t>(st.st_size) > max_bytes)
        return Error{ErrorCode::E_TOO_LARGE, "", std::nullopt,
                     shown + ": " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) + " read at most"};
    std::string text(static_cast<size_t>(st.st_size), '\0');
    size_t have = 0;
    while (have < text.size()) {
        const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Error{ErrorCode::E_IO, "", std::nullopt, shown + ": could not be read"};
        if (n == 0) break;
        have += static_cast<size_t>(n);
    }
    text.resize(have);
    return text;
}

}  // namespace mlens
