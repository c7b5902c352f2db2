// GgufBuilder: writes GGUF bytes field by field, for fixtures that must be exact, hostile or
// broken (malformed-inputs.md Part B). It never validates: it writes what it is told.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mlens/io/byte_source.h"

namespace mlens::test {

class GgufBuilder {
public:
    std::vector<uint8_t> bytes;

    GgufBuilder& raw(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        bytes.insert(bytes.end(), b, b + n);
        return *this;
    }
    GgufBuilder& text(const std::string& s) { return raw(s.data(), s.size()); }
    GgufBuilder& u8(uint8_t v) { return raw(&v, 1); }
    GgufBuilder& u32(uint32_t v) { return raw(&v, 4); }
    GgufBuilder& u64(uint64_t v) { return raw(&v, 8); }
    GgufBuilder& f32(float v) { return raw(&v, 4); }
    GgufBuilder& str(const std::string& s) { u64(s.size()); return text(s); }
    GgufBuilder& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
        text("GGUF"); u32(version); u64(n_tensors); return u64(n_kv);
    }
    GgufBuilder& kv_string(const std::string& key, const std::string& value) { str(key); u32(8); return str(value); }
    GgufBuilder& kv_u32(const std::string& key, uint32_t v) { str(key); u32(4); return u32(v); }
    GgufBuilder& kv_u8(const std::string& key, uint8_t v) { str(key); u32(0); return u8(v); }
    GgufBuilder& tensor_info(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
        str(name); u32(static_cast<uint32_t>(ne.size()));
        for (uint64_t d : ne) u64(d);
        u32(type); return u64(offset);
    }
    GgufBuilder& pad_to(size_t alignment, uint8_t fill = 0) {
        while (bytes.size() % alignment) bytes.push_back(fill);
        return *this;
    }
    GgufBuilder& zeros(size_t n) { bytes.resize(bytes.size() + n, 0); return *this; }
    size_t size() const { return bytes.size(); }
    ByteSourcePtr source(const std::string& name = "<fixture>") const { return memory_source(bytes, name); }
};

// T1 of malformed-inputs.md B0: the valid 256-byte GGUF all GGUF cases derive from.
std::vector<uint8_t> t1_bytes();

}  // namespace mlens::test
