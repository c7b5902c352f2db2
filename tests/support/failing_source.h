// FailingSource: a ByteSource over bytes in memory whose reads past the first `good` bytes fail,
// with `failure` as their reason (read_failure), as a remote source's do.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "mlens/io/byte_source.h"

namespace mlens::test {

class FailingSource : public ByteSource {
public:
    FailingSource(std::vector<uint8_t> bytes, uint64_t good, std::string failure)
        : ByteSource("failing", bytes.size()), m_bytes(std::move(bytes)), m_good(good), m_failure(std::move(failure)) {}
    bool read(uint64_t offset, uint64_t length, void* dst) const override {
        if (!contains(offset, length) || offset + length > m_good) return false;
        std::memcpy(dst, m_bytes.data() + offset, length);
        return true;
    }
    std::string read_failure() const override { return m_failure; }

private:
    std::vector<uint8_t> m_bytes;
    uint64_t m_good;
    std::string m_failure;
};

}  // namespace mlens::test
