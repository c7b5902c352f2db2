// Building metadata Values in memory: scalars, and arrays held in a memory ByteSource so they
// behave exactly like arrays read from a file (ArrayIndex, lazy element access, gguf_writer).
//
// Contract:
//  - Arrays are encoded as GGUF v3 little-endian (strings with 64-bit length prefixes).
//  - truncated_array(v, n) keeps v's element type and its first n elements, sharing v's source
//    (no copy); n >= count gives v unchanged. Non-array values are returned unchanged.
//  - Reading helpers return nullopt when the value is not what they read (no conversion beyond
//    the stated one), so callers can mirror ggml's type-asserting getters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlens/model/value.h"

namespace mlens::compat {

Value value_f32(float v);
Value value_i32(int32_t v);
Value value_bool(bool v);
Value value_string(std::string v);

Value array_i32(const std::vector<int32_t>& v);
Value array_u32(const std::vector<uint32_t>& v);
Value array_f32(const std::vector<float>& v);
Value array_u8(const std::vector<uint8_t>& v);
Value array_bool(const std::vector<bool>& v);
Value array_strings(const std::vector<std::string>& v);
// An array of `element` (a fixed-size type) whose elements are the raw bits of `values`.
Value array_of_scalars(ValueType element, const std::vector<Scalar>& values);

Value truncated_array(const Value& v, uint64_t n);

// Elements of a numeric (integer, float or bool) array as raw Scalars.
std::optional<std::vector<Scalar>> array_scalars(const Value& v);
// Elements of a STRING array.
std::optional<std::vector<std::string>> array_strings_of(const Value& v);
// Element type and count of an array value.
std::optional<ValueType> array_element_type(const Value& v);
uint64_t array_count(const Value& v);

// Exact equality of type and content (arrays element by element).
bool values_equal(const Value& a, const Value& b);

}  // namespace mlens::compat
