// Overflow-checked unsigned 64-bit arithmetic: the one routine every size, count, offset and
// padding computation on untrusted input goes through (malformed-inputs.md A2.1).
//
// Each function returns std::nullopt instead of a wrapped value.
#pragma once

#include <cstdint>
#include <optional>

namespace mlens {

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// Smallest multiple of `alignment` (a power of two, > 0) that is >= value.
inline std::optional<uint64_t> checked_align_up(uint64_t value, uint64_t alignment) {
    auto bumped = checked_add(value, alignment - 1);
    if (!bumped) return std::nullopt;
    return *bumped & ~(alignment - 1);
}

inline bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace mlens
