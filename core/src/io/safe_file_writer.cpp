#include "mlens/io/safe_file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mlens/text/escape.h"

namespace mlens {

namespace {

Error io_error(const std::string& what, const std::string& path) {
    return Error{"E_IO", "output", std::nullopt, what + " " + escape_for_display(path) + ": " + std::strerror(errno)};
}

bool same_file(const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

Result<SafeFileWriter> SafeFileWriter::create(const std::string& path, const Model& inputs) {
    for (const SourceFile& f : inputs.files)
        if (same_file(path, f.path))
            return Error{"E_OUTPUT_IS_INPUT", "output", std::nullopt,
                         "refusing to write over the input file " + escape_for_display(f.path)};
    return create(path);
}

Result<SafeFileWriter> SafeFileWriter::create(const std::string& path) {
    std::string dir = ".", name = path;
    if (auto slash = path.rfind('/'); slash != std::string::npos) {
        dir = slash == 0 ? "/" : path.substr(0, slash);
        name = path.substr(slash + 1);
    }
    if (name.empty()) return Error{"E_IO", "output", std::nullopt, "output path names a directory"};
    std::string temp = dir + "/." + name + ".tmp-XXXXXX";
    std::vector<char> buf(temp.begin(), temp.end());
    buf.push_back('\0');
    int fd = ::mkstemp(buf.data());
    if (fd < 0) return io_error("cannot create a temporary file in", dir);
    return SafeFileWriter(path, std::string(buf.data()), fd);
}

SafeFileWriter::SafeFileWriter(SafeFileWriter&& other) noexcept
    : m_target(std::move(other.m_target)), m_temp(std::move(other.m_temp)), m_fd(other.m_fd),
      m_written(other.m_written), m_committed(other.m_committed) {
    other.m_fd = -1;
    other.m_committed = true;
}

SafeFileWriter::~SafeFileWriter() {
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed) ::unlink(m_temp.c_str());
}

Status SafeFileWriter::write(const void* data, uint64_t length) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (length > 0) {
        ssize_t n = ::write(m_fd, p, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return io_error("cannot write", m_target);
        p += n;
        length -= static_cast<uint64_t>(n);
        m_written += static_cast<uint64_t>(n);
    }
    return ok_status();
}

Status SafeFileWriter::commit() {
    if (::fchmod(m_fd, 0644) != 0 || ::fsync(m_fd) != 0) return io_error("cannot flush", m_target);
    if (::close(m_fd) != 0) {
        m_fd = -1;
        return io_error("cannot close", m_target);
    }
    m_fd = -1;
    if (::rename(m_temp.c_str(), m_target.c_str()) != 0) return io_error("cannot rename into", m_target);
    m_committed = true;
    return ok_status();
}

}  // namespace mlens
