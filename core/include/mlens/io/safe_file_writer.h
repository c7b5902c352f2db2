// SafeFileWriter: writes an output file so that nothing partial is ever left behind.
//
// Contract: bytes go to a temporary file "<dir>/.<name>.tmp-XXXXXX" beside the target; commit()
// flushes, fsyncs and renames it into place. If commit() is never reached (error, cancel,
// exception) the destructor removes the temporary file. create() refuses a target that is one of
// the given Model's input files (same device and inode, so hard links and symlinks count) with
// E_OUTPUT_IS_INPUT. Errors (E_IO) carry the system's message, e.g. "No space left on device".
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "mlens/model/model.h"
#include "mlens/result.h"

namespace mlens {

class SafeFileWriter {
public:
    static Result<SafeFileWriter> create(const std::string& path, const Model& inputs);
    static Result<SafeFileWriter> create(const std::string& path);

    SafeFileWriter(SafeFileWriter&& other) noexcept;
    SafeFileWriter& operator=(SafeFileWriter&&) = delete;
    ~SafeFileWriter();

    Status write(const void* data, uint64_t length);
    Status commit();
    uint64_t bytes_written() const { return m_written; }

private:
    SafeFileWriter(std::string target, std::string temp, int fd) : m_target(std::move(target)), m_temp(std::move(temp)), m_fd(fd) {}

    std::string m_target;
    std::string m_temp;
    int m_fd = -1;
    uint64_t m_written = 0;
    bool m_committed = false;
};

}  // namespace mlens
