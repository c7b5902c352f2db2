#include "mlens/model/value.h"

#include "mlens/io/cursor.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace mlens {

const char* value_type_name(ValueType t) {
    static const char* const kNames[kValueTypeCount] = {"UINT8", "INT8",   "UINT16", "INT16",  "UINT32", "INT32",  "FLOAT32",
                                                        "BOOL",  "STRING", "ARRAY",  "UINT64", "INT64",  "FLOAT64"};
    auto i = static_cast<uint32_t>(t);
    return i < kValueTypeCount ? kNames[i] : "INVALID";
}

uint32_t value_type_size(ValueType t) {
    switch (t) {
        case ValueType::u8:
        case ValueType::i8:
        case ValueType::boolean:
            return 1;
        case ValueType::u16:
        case ValueType::i16:
            return 2;
        case ValueType::u32:
        case ValueType::i32:
        case ValueType::f32:
            return 4;
        case ValueType::u64:
        case ValueType::i64:
        case ValueType::f64:
            return 8;
        default:
            return 0;
    }
}

bool value_type_is_integer(ValueType t) {
    switch (t) {
        case ValueType::u8:
        case ValueType::i8:
        case ValueType::u16:
        case ValueType::i16:
        case ValueType::u32:
        case ValueType::i32:
        case ValueType::u64:
        case ValueType::i64:
            return true;
        default:
            return false;
    }
}

namespace {

double float_bits(ValueType t, uint64_t bits) {
    if (t == ValueType::f32) {
        float f;
        auto b = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b, 4);
        return f;
    }
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
}

int64_t clamp_to_int(double d) {
    if (std::isnan(d)) return 0;
    if (d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
    if (d <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(d);
}

}  // namespace

int64_t Scalar::as_int() const {
    switch (type) {
        case ValueType::i8:
            return static_cast<int8_t>(bits);
        case ValueType::i16:
            return static_cast<int16_t>(bits);
        case ValueType::i32:
            return static_cast<int32_t>(bits);
        case ValueType::i64:
            return static_cast<int64_t>(bits);
        case ValueType::f32:
        case ValueType::f64:
            return clamp_to_int(float_bits(type, bits));
        case ValueType::u64:
            return bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                                     : static_cast<int64_t>(bits);
        default:
            return static_cast<int64_t>(bits);
    }
}

uint64_t Scalar::as_uint() const {
    switch (type) {
        case ValueType::i8:
        case ValueType::i16:
        case ValueType::i32:
        case ValueType::i64:
        case ValueType::f32:
        case ValueType::f64: {
            int64_t v = as_int();
            return v < 0 ? 0 : static_cast<uint64_t>(v);
        }
        default:
            return bits;
    }
}

double Scalar::as_double() const {
    switch (type) {
        case ValueType::f32:
        case ValueType::f64:
            return float_bits(type, bits);
        case ValueType::i8:
        case ValueType::i16:
        case ValueType::i32:
        case ValueType::i64:
            return static_cast<double>(as_int());
        default:
            return static_cast<double>(bits);
    }
}

std::string Scalar::to_string() const {
    char buf[64];
    switch (type) {
        case ValueType::f32: {
            auto r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(float_bits(type, bits)));
            return std::string(buf, r.ptr);
        }
        case ValueType::f64: {
            auto r = std::to_chars(buf, buf + sizeof buf, float_bits(type, bits));
            return std::string(buf, r.ptr);
        }
        case ValueType::boolean:
            if (bits == 0) return "false";
            if (bits == 1) return "true";
            return "true (raw " + std::to_string(bits) + ")";
        case ValueType::i8:
        case ValueType::i16:
        case ValueType::i32:
        case ValueType::i64:
            return std::to_string(as_int());
        default:
            return std::to_string(bits);
    }
}

std::string LazyBytes::read(uint64_t max_bytes) const {
    std::string out(std::min(length, max_bytes), '\0');
    if (!source || !source->read(offset, out.size(), out.data())) return {};
    return out;
}

namespace {

uint64_t read_uint(const ByteSource& src, uint64_t offset, uint32_t size, bool swap) {
    uint64_t v = 0;
    uint8_t b[8] = {};
    if (!src.read(offset, size, b)) return 0;
    if (swap) {
        for (uint32_t i = 0; i < size; ++i) v |= static_cast<uint64_t>(b[size - 1 - i]) << (8 * i);
    } else {
        for (uint32_t i = 0; i < size; ++i) v |= static_cast<uint64_t>(b[i]) << (8 * i);
    }
    return v;
}

}  // namespace

Scalar ArrayIndex::scalar_at(uint64_t i) const {
    uint32_t size = value_type_size(element_type);
    if (i >= count || size == 0) return Scalar{element_type, 0};
    return Scalar{element_type, read_uint(*source, data_offset + i * size, size, swap_bytes)};
}

uint64_t ArrayIndex::element_offset(uint64_t i) const {
    if (element_type == ValueType::string) return i < string_offsets.size() ? string_offsets[i] : 0;
    return data_offset + i * value_type_size(element_type);
}

uint64_t ArrayIndex::string_length_at(uint64_t i) const {
    if (i >= string_offsets.size()) return 0;
    return read_uint(*source, string_offsets[i], string_length_bytes, swap_bytes);
}

std::string ArrayIndex::string_at(uint64_t i, uint64_t max_bytes) const {
    if (i >= string_offsets.size()) return {};
    LazyBytes bytes{source, string_offsets[i] + string_length_bytes, string_length_at(i)};
    return bytes.read(max_bytes);
}

void ArrayIndex::for_each_string(uint64_t first, uint64_t max_bytes, const std::function<bool(uint64_t, std::string_view)>& fn) const {
    if (element_type != ValueType::string || first >= string_offsets.size()) return;
    Cursor cur(*source, string_offsets[first], swap_bytes);
    std::string text;
    for (uint64_t i = first; i < string_offsets.size(); ++i) {
        uint64_t len = 0;
        if (!cur.seek(string_offsets[i])) return;
        if (string_length_bytes == 4) {
            uint32_t l32;
            if (!cur.read_u32(l32)) return;
            len = l32;
        } else if (!cur.read_u64(len)) {
            return;
        }
        if (!cur.read_string(text, std::min(len, max_bytes))) return;
        if (!fn(i, text)) return;
    }
}

std::string Value::string_value(uint64_t max_bytes) const {
    if (lazy_text) return lazy_text->read(max_bytes);
    return max_bytes < text.size() ? text.substr(0, max_bytes) : text;
}

Value Value::of_scalar(Scalar s) {
    Value v;
    v.type = s.type;
    v.scalar = s;
    return v;
}

Value Value::of_string(std::string s) {
    Value v;
    v.type = ValueType::string;
    v.text = std::move(s);
    return v;
}

Value Value::of_u32(uint32_t x) { return of_scalar(Scalar{ValueType::u32, x}); }

}  // namespace mlens
