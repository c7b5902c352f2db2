#include "mlens/io/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mlens/io/checked_math.h"

namespace mlens {

bool ByteSource::contains(uint64_t offset, uint64_t length) const {
    auto end = checked_add(offset, length);
    return end && *end <= m_size;
}

namespace {

class FileSource final : public ByteSource {
public:
    FileSource(std::string path, uint64_t size, int fd) : ByteSource(std::move(path), size), m_fd(fd) {}
    ~FileSource() override { ::close(m_fd); }

    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        if (!contains(offset, length)) return false;
        auto* out = static_cast<uint8_t*>(dst);
        while (length > 0) {
            ssize_t got = ::pread(m_fd, out, length, static_cast<off_t>(offset));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return false;  // error, or the file shrank under us
            out += got;
            offset += static_cast<uint64_t>(got);
            length -= static_cast<uint64_t>(got);
        }
        return true;
    }

private:
    int m_fd;
};

class MemorySource final : public ByteSource {
public:
    MemorySource(std::vector<uint8_t> bytes, std::string name)
        : ByteSource(std::move(name), bytes.size()), m_bytes(std::move(bytes)) {}

    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        if (!contains(offset, length)) return false;
        if (length) std::memcpy(dst, m_bytes.data() + offset, length);
        return true;
    }

private:
    std::vector<uint8_t> m_bytes;
};

}  // namespace

Result<ByteSourcePtr> open_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return Error{"E_NOT_FOUND", "path", std::nullopt, "cannot open: " + std::string(std::strerror(errno))};
    if (!S_ISREG(st.st_mode))
        return Error{"E_NOT_REGULAR_FILE", "path", std::nullopt, "not a regular file"};
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return Error{"E_IO", "path", std::nullopt, "cannot open: " + std::string(std::strerror(errno))};
    // Re-check the opened object: the path may have been swapped between stat and open.
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Error{"E_NOT_REGULAR_FILE", "path", std::nullopt, "not a regular file"};
    }
    return ByteSourcePtr(std::make_shared<FileSource>(path, static_cast<uint64_t>(st.st_size), fd));
}

ByteSourcePtr memory_source(std::vector<uint8_t> bytes, std::string name) {
    return std::make_shared<MemorySource>(std::move(bytes), std::move(name));
}

}  // namespace mlens
