// ByteSource: read-only random access to the bytes of one file (or an in-memory buffer).
//
// Contract:
//  - Every read is bounds-checked with overflow-checked arithmetic; a read that does not fit in
//    [0, size()) fails and copies nothing.
//  - File sources read with pread, never through a mapping, so a file that shrinks while it is
//    read gives a short read (reported as failure), never SIGBUS.
//  - open_file refuses anything but a regular file (FIFOs, devices, directories, sockets) before
//    any blocking open: it stats first and opens with O_NONBLOCK.
//  - size() is the size at open time; thread-safe for concurrent reads.
//  - stamp() is a file source's identity as opened (device, inode, size, modification and
//    change time: file_stamp.h); other sources have none.
//  - A file source does not hold a descriptor for its whole life: at most
//    descriptor_pool_capacity() descriptors are open at once across all sources (a quarter of the
//    soft RLIMIT_NOFILE, between 4 and 1024, read when the pool starts), the least recently used
//    idle one is closed past that, and its source reopens the path on its next read. A reopened
//    path that no longer names the same file (device and inode) fails the read, like a file that
//    shrank. When an open fails with EMFILE or ENFILE, an idle descriptor of the pool is closed and
//    the open tried again; if it still fails the error says "out of file descriptors (limit N)".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlens/io/file_stamp.h"
#include "mlens/result.h"

namespace mlens {

class ByteSource {
public:
    virtual ~ByteSource() = default;
    uint64_t size() const { return m_size; }
    const std::string& path() const { return m_path; }

    // Copies [offset, offset+length) into dst. False (and nothing copied) if out of range or on
    // an I/O error or short read.
    virtual bool read(uint64_t offset, uint64_t length, void* dst) const = 0;

    // read(), from a caller that goes on reading sequentially up to `ahead_end` (the end of one
    // tensor's data): a source that fetches ahead (a remote one) may fetch up to there, never
    // past it. A file reads only what is asked.
    virtual bool read_ahead(uint64_t offset, uint64_t length, void* dst, uint64_t ahead_end) const;

    // Why the last failed read failed, when the source knows more than "it failed" (a remote
    // source: the HTTP or network error); empty otherwise.
    virtual std::string read_failure() const { return {}; }

    // The query ("?...", without a fragment) of the reference the source was opened by, which the
    // files beside it are opened with too (a signed or token-carrying URL: the shards of a split
    // model, the files of a safetensors index); empty for a file. Never shown: path() has none.
    virtual std::string reference_query() const { return {}; }

    virtual std::optional<FileStamp> stamp() const { return std::nullopt; }

    // True if [offset, offset+length) lies inside the source (checked add).
    bool contains(uint64_t offset, uint64_t length) const;

protected:
    ByteSource(std::string path, uint64_t size) : m_path(std::move(path)), m_size(size) {}

private:
    std::string m_path;
    uint64_t m_size;
};

using ByteSourcePtr = std::shared_ptr<const ByteSource>;

// Opens a regular file read-only. Errors: E_NOT_FOUND, E_NOT_REGULAR_FILE, E_PERMISSION,
// E_FD_LIMIT (out of descriptors), E_IO.
Result<ByteSourcePtr> open_file(const std::string& path);

// How many descriptors file sources keep open at most.
size_t descriptor_pool_capacity();

// Closes one idle pooled descriptor, if any (for callers whose own open failed with EMFILE/ENFILE
// and that want to try again). True if one was closed.
bool release_idle_descriptor();

// The text for a failed open's errno: "out of file descriptors (limit N)" for EMFILE (N the soft
// RLIMIT_NOFILE), "the system is out of file descriptors" for ENFILE, else strerror.
std::string open_error_text(int err);

// The error code for a failed open's errno: E_FD_LIMIT, E_PERMISSION, E_NOT_FOUND or E_IO.
ErrorCode open_error_code(int err);

// A source over bytes held in memory (tests, fuzzing, generated fixtures). `name` is what
// path() reports.
ByteSourcePtr memory_source(std::vector<uint8_t> bytes, std::string name = "<memory>");

}  // namespace mlens
