#include "mlens/io/byte_source.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <list>
#include <mutex>

#include "mlens/io/checked_math.h"

namespace mlens {

bool ByteSource::contains(uint64_t offset, uint64_t length) const {
    auto end = checked_add(offset, length);
    return end && *end <= m_size;
}

bool ByteSource::read_ahead(uint64_t offset, uint64_t length, void* dst, uint64_t) const { return read(offset, length, dst); }

namespace {

// Open descriptors are shared out by one process-wide pool, so a model made of thousands of files
// (an Ollama model with a blob per tensor, a folder of shards) never runs into the open-files
// limit: past the capacity, the least recently used idle descriptor is closed, and its source
// reopens the file on its next read — refusing it if the path now names another file. The
// capacity leaves three quarters of the limit to everything else the process opens (directory
// walks, hashing, the standard streams, the GUI's own files).
constexpr size_t kMinPooledFiles = 4;
constexpr size_t kMaxPooledFiles = 1024;

uint64_t soft_file_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
    return static_cast<uint64_t>(limit.rlim_cur);
}

size_t pool_capacity_for(uint64_t soft_limit) {
    uint64_t quarter = soft_limit / 4;
    return static_cast<size_t>(std::clamp<uint64_t>(quarter, kMinPooledFiles, kMaxPooledFiles));
}

bool out_of_descriptors(int err) { return err == EMFILE || err == ENFILE; }

class FileSource;

class DescriptorPool {
public:
    // Never destroyed: sources held by static objects are released during static destruction.
    static DescriptorPool& instance() {
        static DescriptorPool* pool = new DescriptorPool;
        return *pool;
    }
    // A descriptor for `source`, or -1 when it cannot be reopened; pair with release().
    int acquire(const FileSource& source);
    void release(const FileSource& source);
    void adopt(const FileSource& source, int fd);
    void forget(const FileSource& source);
    bool close_one_idle();
    bool close_one_idle_locked();  // the caller holds the pool's lock
    size_t capacity() const { return m_capacity; }

private:
    void evict_idle_locked();

    const size_t m_capacity = pool_capacity_for(soft_file_limit());
    std::mutex m_mutex;
    std::list<const FileSource*> m_open;  // most recently used first
};

class FileSource final : public ByteSource {
public:
    FileSource(std::string path, int fd, const struct stat& st)
        : ByteSource(std::move(path), static_cast<uint64_t>(st.st_size)), m_dev(st.st_dev), m_ino(st.st_ino), m_stamp(file_stamp(st)) {
        DescriptorPool::instance().adopt(*this, fd);
    }
    ~FileSource() override { DescriptorPool::instance().forget(*this); }

    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        if (!contains(offset, length)) return false;
        if (length == 0) return true;
        DescriptorPool& pool = DescriptorPool::instance();
        int fd = pool.acquire(*this);
        if (fd < 0) return false;
        auto* out = static_cast<uint8_t*>(dst);
        bool ok = true;
        while (length > 0) {
            ssize_t got = ::pread(fd, out, length, static_cast<off_t>(offset));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {  // error, or the file shrank under us
                ok = false;
                break;
            }
            out += got;
            offset += static_cast<uint64_t>(got);
            length -= static_cast<uint64_t>(got);
        }
        pool.release(*this);
        return ok;
    }

    std::optional<FileStamp> stamp() const override { return m_stamp; }

private:
    friend class DescriptorPool;
    // Reopens the file; -1 unless it is still the same regular file. Called with the pool locked:
    // when descriptors run out, idle ones of the pool make room.
    int reopen(DescriptorPool& pool) const {
        int fd = ::open(path().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        while (fd < 0 && out_of_descriptors(errno) && pool.close_one_idle_locked())
            fd = ::open(path().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) return -1;
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != m_dev || st.st_ino != m_ino) {
            ::close(fd);
            return -1;
        }
        return fd;
    }

    dev_t m_dev;
    ino_t m_ino;
    FileStamp m_stamp;
    // Guarded by the pool's mutex.
    mutable int m_fd = -1;
    mutable int m_users = 0;
    mutable std::list<const FileSource*>::iterator m_slot;
};

int DescriptorPool::acquire(const FileSource& source) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (source.m_fd < 0) {
        int fd = source.reopen(*this);
        if (fd < 0) return -1;
        source.m_fd = fd;
        m_open.push_front(&source);
        source.m_slot = m_open.begin();
        evict_idle_locked();
    } else {
        m_open.splice(m_open.begin(), m_open, source.m_slot);
    }
    ++source.m_users;
    return source.m_fd;
}

void DescriptorPool::release(const FileSource& source) {
    std::lock_guard<std::mutex> lock(m_mutex);
    --source.m_users;
}

void DescriptorPool::adopt(const FileSource& source, int fd) {
    std::lock_guard<std::mutex> lock(m_mutex);
    source.m_fd = fd;
    m_open.push_front(&source);
    source.m_slot = m_open.begin();
    evict_idle_locked();
}

void DescriptorPool::forget(const FileSource& source) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (source.m_fd < 0) return;
    ::close(source.m_fd);
    source.m_fd = -1;
    m_open.erase(source.m_slot);
}

bool DescriptorPool::close_one_idle() {
    std::lock_guard<std::mutex> lock(m_mutex);
    return close_one_idle_locked();
}

bool DescriptorPool::close_one_idle_locked() {
    for (auto it = m_open.end(); it != m_open.begin();) {
        --it;
        const FileSource* victim = *it;
        if (victim->m_users > 0) continue;
        ::close(victim->m_fd);
        victim->m_fd = -1;
        m_open.erase(it);
        return true;
    }
    return false;
}

void DescriptorPool::evict_idle_locked() {
    // The front entry is the one just opened or used: never evicted here.
    auto it = m_open.end();
    while (m_open.size() > m_capacity && it != std::next(m_open.begin())) {
        --it;
        const FileSource* victim = *it;
        if (victim->m_users > 0) continue;
        ::close(victim->m_fd);
        victim->m_fd = -1;
        it = m_open.erase(it);
    }
}

class MemorySource final : public ByteSource {
public:
    MemorySource(std::vector<uint8_t> bytes, std::string name) : ByteSource(std::move(name), bytes.size()), m_bytes(std::move(bytes)) {}

    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        if (!contains(offset, length)) return false;
        if (length) std::memcpy(dst, m_bytes.data() + offset, length);
        return true;
    }

private:
    std::vector<uint8_t> m_bytes;
};

}  // namespace

size_t descriptor_pool_capacity() { return DescriptorPool::instance().capacity(); }

bool release_idle_descriptor() { return DescriptorPool::instance().close_one_idle(); }

std::string open_error_text(int err) {
    if (err == EMFILE) {
        uint64_t limit = soft_file_limit();
        return "out of file descriptors (limit " + (limit == UINT64_MAX ? std::string("unlimited") : std::to_string(limit)) + ")";
    }
    if (err == ENFILE) return "the system is out of file descriptors";
    return std::strerror(err);
}

ErrorCode open_error_code(int err) {
    if (out_of_descriptors(err)) return ErrorCode::E_FD_LIMIT;
    if (err == EACCES || err == EPERM) return ErrorCode::E_PERMISSION;
    if (err == ENOENT || err == ENOTDIR) return ErrorCode::E_NOT_FOUND;
    return ErrorCode::E_IO;
}

Result<ByteSourcePtr> open_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return Error{ErrorCode::E_NOT_FOUND, "path", std::nullopt, "cannot open: " + std::string(std::strerror(errno))};
    if (!S_ISREG(st.st_mode)) return Error{ErrorCode::E_NOT_REGULAR_FILE, "path", std::nullopt, "not a regular file"};
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    while (fd < 0 && out_of_descriptors(errno) && release_idle_descriptor()) fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return Error{open_error_code(err), "path", std::nullopt, "cannot open: " + open_error_text(err)};
    }
    // Re-check the opened object: the path may have been swapped between stat and open.
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Error{ErrorCode::E_NOT_REGULAR_FILE, "path", std::nullopt, "not a regular file"};
    }
    return ByteSourcePtr(std::make_shared<FileSource>(path, fd, st));
}

ByteSourcePtr memory_source(std::vector<uint8_t> bytes, std::string name) {
    return std::make_shared<MemorySource>(std::move(bytes), std::move(name));
}

}  // namespace mlens
