#include "mlens/compat/value_builders.h"

#include <cstring>
#include <memory>

#include "mlens/io/byte_source.h"

namespace mlens::compat {

namespace {

Value float_scalar(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return Value::of_scalar(Scalar{ValueType::f32, bits});
}

void put_le(std::vector<uint8_t>& out, uint64_t v, uint32_t size) {
    for (uint32_t i = 0; i < size; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// An ArrayIndex over `bytes` (encoded elements only) held in a memory source.
Value memory_array(ValueType element, uint64_t count, std::vector<uint8_t> bytes, StringOffsets string_offsets) {
    auto index = std::make_shared<ArrayIndex>();
    index->element_type = element;
    index->count = count;
    index->data_offset = 0;
    index->data_length = bytes.size();
    index->string_offsets = std::move(string_offsets);
    index->string_length_bytes = 8;
    index->source = memory_source(std::move(bytes), "<compat value>");
    Value v;
    v.type = ValueType::array;
    v.array = std::move(index);
    return v;
}

template <typename T>
Value numeric_array(ValueType element, const std::vector<T>& values) {
    std::vector<uint8_t> bytes;
    bytes.reserve(values.size() * sizeof(T));
    for (T x : values) {
        uint64_t bits = 0;
        std::memcpy(&bits, &x, sizeof(T));
        put_le(bytes, bits, sizeof(T));
    }
    return memory_array(element, values.size(), std::move(bytes), {});
}

}  // namespace

Value value_f32(float v) { return float_scalar(v); }
Value value_i32(int32_t v) { return Value::of_scalar(Scalar{ValueType::i32, static_cast<uint32_t>(v)}); }
Value value_bool(bool v) { return Value::of_scalar(Scalar{ValueType::boolean, v ? 1u : 0u}); }
Value value_string(std::string v) { return Value::of_string(std::move(v)); }

Value array_i32(const std::vector<int32_t>& v) { return numeric_array(ValueType::i32, v); }
Value array_u32(const std::vector<uint32_t>& v) { return numeric_array(ValueType::u32, v); }
Value array_f32(const std::vector<float>& v) { return numeric_array(ValueType::f32, v); }
Value array_u8(const std::vector<uint8_t>& v) { return numeric_array(ValueType::u8, v); }

Value array_bool(const std::vector<bool>& v) {
    std::vector<uint8_t> bytes(v.begin(), v.end());
    return memory_array(ValueType::boolean, v.size(), std::move(bytes), {});
}

Value array_of_scalars(ValueType element, const std::vector<Scalar>& values) {
    const uint32_t size = value_type_size(element);
    std::vector<uint8_t> bytes;
    bytes.reserve(values.size() * size);
    for (const Scalar& x : values) put_le(bytes, x.bits, size);
    return memory_array(element, values.size(), std::move(bytes), {});
}

Value array_strings(const std::vector<std::string>& v) {
    std::vector<uint8_t> bytes;
    StringOffsets offsets(0, v.size());
    for (const std::string& s : v) {
        offsets.append(bytes.size());
        put_le(bytes, s.size(), 8);
        bytes.insert(bytes.end(), s.begin(), s.end());
    }
    return memory_array(ValueType::string, v.size(), std::move(bytes), std::move(offsets));
}

Value truncated_array(const Value& v, uint64_t n) {
    if (!v.is_array() || !v.array || v.array->count <= n) return v;
    auto index = std::make_shared<ArrayIndex>(*v.array);
    index->count = n;
    if (index->element_type == ValueType::string) {
        uint64_t end = index->string_offsets[n];
        index->string_offsets.truncate(n);
        index->data_length = end - index->data_offset;
    } else {
        index->data_length = n * value_type_size(index->element_type);
    }
    Value out = v;
    out.array = std::move(index);
    return out;
}

std::optional<std::vector<Scalar>> array_scalars(const Value& v) {
    if (!v.is_array() || !v.array || v.array->element_type == ValueType::string) return std::nullopt;
    std::vector<Scalar> out;
    out.reserve(v.array->count);
    for (uint64_t i = 0; i < v.array->count; ++i) out.push_back(v.array->scalar_at(i));
    return out;
}

std::optional<std::vector<std::string>> array_strings_of(const Value& v) {
    if (!v.is_array() || !v.array || v.array->element_type != ValueType::string) return std::nullopt;
    std::vector<std::string> out;
    out.reserve(v.array->count);
    v.array->for_each_string(0, UINT64_MAX, [&](uint64_t, std::string_view s) {
        out.emplace_back(s);
        return true;
    });
    if (out.size() != v.array->count) return std::nullopt;
    return out;
}

std::optional<ValueType> array_element_type(const Value& v) {
    if (!v.is_array() || !v.array) return std::nullopt;
    return v.array->element_type;
}

uint64_t array_count(const Value& v) { return v.is_array() && v.array ? v.array->count : 0; }

bool values_equal(const Value& a, const Value& b) {
    if (a.type != b.type) return false;
    if (a.is_string()) return a.string_length() == b.string_length() && a.string_value() == b.string_value();
    if (!a.is_array()) return a.scalar.bits == b.scalar.bits;
    if (!a.array || !b.array) return a.array == b.array;
    if (a.array->element_type != b.array->element_type || a.array->count != b.array->count) return false;
    if (a.array->element_type == ValueType::string) return array_strings_of(a) == array_strings_of(b);
    for (uint64_t i = 0; i < a.array->count; ++i)
        if (a.array->scalar_at(i).bits != b.array->scalar_at(i).bits) return false;
    return true;
}

}  // namespace mlens::compat
