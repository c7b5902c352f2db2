// GGUF-typed values as the Model holds them.
//
// Contract:
//  - ValueType uses GGUF's numeric ids (0..12); every format maps its metadata onto them
//    (safetensors __metadata__ values are STRING).
//  - Scalars are held decoded. Strings up to kInlineStringBytes are held as std::string; longer
//    ones stay in the file as a LazyBytes range (previews read on demand, never copied whole).
//  - Arrays are never materialized: an ArrayIndex remembers where the elements are (for string
//    arrays, the offset of every element's length prefix, string_offsets.h) and hands out element
//    i on request.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/io/byte_source.h"
#include "mlens/model/string_offsets.h"

namespace mlens {

enum class ValueType : uint32_t {
    u8 = 0,
    i8 = 1,
    u16 = 2,
    i16 = 3,
    u32 = 4,
    i32 = 5,
    f32 = 6,
    boolean = 7,
    string = 8,
    array = 9,
    u64 = 10,
    i64 = 11,
    f64 = 12,
};
constexpr uint32_t kValueTypeCount = 13;

const char* value_type_name(ValueType t);  // "UINT8", ..., "FLOAT64" (GGUF spelling)
// Size in bytes of a fixed-size scalar type; 0 for STRING and ARRAY.
uint32_t value_type_size(ValueType t);
bool value_type_is_integer(ValueType t);

// A decoded fixed-size scalar.
struct Scalar {
    ValueType type = ValueType::u8;
    uint64_t bits = 0;  // raw little-endian bits, zero-extended

    int64_t as_int() const;  // sign-aware for signed types; floats truncated toward zero (clamped)
    uint64_t as_uint() const;  // negative values clamp to 0
    double as_double() const;
    std::string to_string() const;  // exact text: integers in decimal, floats round-trippable
};

// Bytes that stay in the file: [offset, offset+length) of a source.
struct LazyBytes {
    ByteSourcePtr source;
    uint64_t offset = 0;
    uint64_t length = 0;
    std::string read(uint64_t max_bytes) const;  // first min(length, max_bytes) bytes
};

// Where an array's elements live.
class ArrayIndex {
public:
    ValueType element_type = ValueType::u8;
    uint64_t count = 0;
    ByteSourcePtr source;
    bool swap_bytes = false;
    uint64_t data_offset = 0;  // first element (numeric arrays)
    uint64_t data_length = 0;  // bytes spanned by all elements
    StringOffsets string_offsets;  // STRING arrays: offset of element i's length field
    uint32_t string_length_bytes = 8;  // 4 in GGUF v1

    Scalar scalar_at(uint64_t i) const;  // numeric/bool arrays; i < count
    std::string string_at(uint64_t i, uint64_t max_bytes = UINT64_MAX) const;  // string arrays
    uint64_t string_length_at(uint64_t i) const;
    // Byte range of element i (for strings: the length prefix and the text).
    uint64_t element_offset(uint64_t i) const;
    // Streams string elements [first, count) in order through one buffered cursor (fast for
    // whole-vocabulary scans); each is cut to max_bytes. fn returns false to stop early.
    void for_each_string(uint64_t first, uint64_t max_bytes, const std::function<bool(uint64_t i, std::string_view s)>& fn) const;
};

struct Value {
    ValueType type = ValueType::u8;
    Scalar scalar;  // fixed-size types
    std::string text;  // STRING held inline
    std::optional<LazyBytes> lazy_text;  // STRING too long to hold inline
    std::shared_ptr<const ArrayIndex> array;  // ARRAY

    static constexpr uint64_t kInlineStringBytes = 1u << 20;

    bool is_string() const { return type == ValueType::string; }
    bool is_array() const { return type == ValueType::array; }
    uint64_t string_length() const { return lazy_text ? lazy_text->length : text.size(); }
    // The string (inline, or the first max_bytes of a lazy one).
    std::string string_value(uint64_t max_bytes = UINT64_MAX) const;

    static Value of_scalar(Scalar s);
    static Value of_string(std::string s);
    static Value of_u32(uint32_t v);
};

}  // namespace mlens
