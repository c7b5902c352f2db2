// GgufBuilder: writes GGUF bytes field by field, for fixtures that must be exact, hostile or
// broken (malformed-inputs.md Part B). It never validates: it writes what it is told. With
// big_endian set, every multi-byte number it writes is big-endian (strings stay as they are).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mlens/io/byte_source.h"
#include "mlens/model/value.h"

namespace mlens::test {

class GgufBuilder {
public:
    std::vector<uint8_t> bytes;
    bool big_endian = false;

    GgufBuilder& raw(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        bytes.insert(bytes.end(), b, b + n);
        return *this;
    }
    GgufBuilder& text(const std::string& s) { return raw(s.data(), s.size()); }
    GgufBuilder& u8(uint8_t v) { return raw(&v, 1); }
    GgufBuilder& u16(uint16_t v) { return number(&v, 2); }
    GgufBuilder& u32(uint32_t v) { return number(&v, 4); }
    GgufBuilder& u64(uint64_t v) { return number(&v, 8); }
    GgufBuilder& f32(float v) { return number(&v, 4); }
    GgufBuilder& f64(double v) { return number(&v, 8); }
    GgufBuilder& str(const std::string& s) {
        u64(s.size());
        return text(s);
    }
    GgufBuilder& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
        text("GGUF");
        u32(version);
        u64(n_tensors);
        return u64(n_kv);
    }
    // A key and its value type; the value follows.
    GgufBuilder& kv(const std::string& key, ValueType type) {
        str(key);
        return u32(static_cast<uint32_t>(type));
    }
    GgufBuilder& kv_string(const std::string& key, const std::string& value) {
        kv(key, ValueType::string);
        return str(value);
    }
    GgufBuilder& kv_u32(const std::string& key, uint32_t v) {
        kv(key, ValueType::u32);
        return u32(v);
    }
    GgufBuilder& kv_u8(const std::string& key, uint8_t v) {
        kv(key, ValueType::u8);
        return u8(v);
    }
    // An ARRAY key with its element type and count; the elements follow.
    GgufBuilder& kv_array(const std::string& key, ValueType element, uint64_t count) {
        kv(key, ValueType::array);
        u32(static_cast<uint32_t>(element));
        return u64(count);
    }
    GgufBuilder& kv_strings(const std::string& key, const std::vector<std::string>& values) {
        kv_array(key, ValueType::string, values.size());
        for (const std::string& s : values) str(s);
        return *this;
    }
    GgufBuilder& tensor_info(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
        str(name);
        u32(static_cast<uint32_t>(ne.size()));
        for (uint64_t d : ne) u64(d);
        u32(type);
        return u64(offset);
    }
    GgufBuilder& pad_to(size_t alignment, uint8_t fill = 0) {
        while (bytes.size() % alignment) bytes.push_back(fill);
        return *this;
    }
    GgufBuilder& zeros(size_t n) {
        bytes.resize(bytes.size() + n, 0);
        return *this;
    }
    // count F32 values first, first + 1, ...
    GgufBuilder& f32_run(size_t count, float first = 0.0f) {
        for (size_t i = 0; i < count; ++i) f32(first + static_cast<float>(i));
        return *this;
    }
    size_t size() const { return bytes.size(); }
    ByteSourcePtr source(const std::string& name = "<fixture>") const { return memory_source(bytes, name); }

private:
    GgufBuilder& number(const void* p, size_t n) {
        uint8_t b[8];
        std::memcpy(b, p, n);
        if (big_endian)
            for (size_t i = 0; i < n / 2; ++i) std::swap(b[i], b[n - 1 - i]);
        return raw(b, n);
    }
};

// T1 of malformed-inputs.md B0: the valid 256-byte GGUF all GGUF cases derive from.
std::vector<uint8_t> t1_bytes();

// "T1 + KV x": T1 with `extra_kvs` more KVs, written by `extra`, after kv[0]; n_kv, the tensor
// info, the padding and the data shift accordingly.
std::vector<uint8_t> t1_plus_kvs(uint64_t extra_kvs, const std::function<void(GgufBuilder&)>& extra);

// T1 with every multi-byte field and the tensor data big-endian; the magic stays "GGUF" (G08).
std::vector<uint8_t> t1_big_endian_bytes();

// Offsets of T1's fields (malformed-inputs.md B0).
namespace t1 {
constexpr uint64_t kVersion = 4, kNTensors = 8, kNKv = 16, kKeyLength = 24, kKey = 32, kKvType = 52, kValueLength = 56, kValue = 64,
                   kNameLength = 69, kName = 77, kNDims = 78, kNe0 = 82, kType = 90, kOffset = 94, kInfosEnd = 102, kData = 128,
                   kSize = 256;
}  // namespace t1

}  // namespace mlens::test
