// The per-chunk pieces of fsck (fsck.h): finding accumulators, the value scan on stored bits, the
// block-scale checks and the content hash. Internal to core/analysis.
//
// Contract:
//  - Accumulator keeps a count and the first kFsckMaxLocations locations by element index; merge
//    is order-independent, so any thread may finish first.
//  - scan_values reads `n` codes of one row piece (F32, F16 or BF16 bits; decoded values are F32
//    bits), ORs "non-zero" into columns[0..n) when columns is not null, reports NaN, Inf and (when
//    check_beyond) finite |x| > 65504 through `report`, and returns whether any value is non-zero.
//    One pass of integer compares that the compiler vectorizes; a second pass only over a piece
//    that holds such a value.
//  - ggml_scale_fields: where the scales of a ggml block type are (see fsck.h for the list).
//  - classify_*: the class of one scale as stored.
//  - hash_bytes: a 64-bit hash of bytes chained from `seed`, used to find duplicate candidates
//    (never trusted alone: candidates are compared byte for byte).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlens/analysis/fsck.h"
#include "mlens/formats/ggml_type_table.h"

namespace mlens::fsck_detail {

struct Accumulator {
    FindingSeverity severity = FindingSeverity::warning;
    uint64_t count = 0;
    std::vector<FsckLocation> locations;
    std::optional<double> first_value;  // the value at locations[0], where the finding has one
    std::string first_reason;  // why the first failed (F_READ_FAILED: the read's error), else empty

    void add(const FsckLocation& at, uint64_t n = 1, std::optional<double> value = std::nullopt);
    void merge(Accumulator&& other);
};

// Accumulators by (code, field).
struct FindingSet {
    std::map<std::pair<ErrorCode, std::string>, Accumulator> by_key;
    Accumulator& at(ErrorCode code, const std::string& field, FindingSeverity severity);
    void merge(FindingSet&& other);
};

enum class ValueEvent { nan, inf, beyond_f16 };

enum class BitsKind { f32, f16, bf16 };

template <typename Report>
bool scan_values(BitsKind kind, const void* codes, uint64_t n, uint8_t* columns, bool check_beyond, Report&& report);

// The scale fields of the type's row (ggml_type_table.h) that classify_scale reads: all but
// UE4M3 (NVFP4), which fsck does not check.
std::vector<GgmlScaleField> ggml_scale_fields(uint32_t ggml_type);

enum class ScaleClass { normal, zero, subnormal, nan, inf };
// f16, f32 or e8m0 (0xFF is NaN, every other code a normal power of two).
ScaleClass classify_scale(ScaleEncoding encoding, const uint8_t* at);
// A decoded scale whose stored format has `min_normal` as its least normal magnitude.
ScaleClass classify_value(float v, float min_normal);

uint64_t hash_bytes(const void* data, uint64_t n, uint64_t seed);
uint64_t mix64(uint64_t x);

// The OR and the maximum of the magnitude bits (code & abs_mask) of n codes, ORing "non-zero"
// into columns[0..n) when columns is not null: one pass, vectorized for the running CPU.
struct BitsSummary {
    uint32_t any = 0, top = 0;
};
BitsSummary summarize_bits32(const uint32_t* p, uint64_t n, uint8_t* columns);
BitsSummary summarize_bits16(const uint16_t* p, uint64_t n, uint8_t* columns);

// scan_values on one code width: the summary pass, then a second pass only over a piece that holds
// a value above the limit.
template <typename T, T kAbsMask, T kSpecial, T kBeyond, typename Report>
bool scan_bits(const T* p, uint64_t n, uint8_t* columns, bool check_beyond, Report&& report) {
    BitsSummary s;
    if constexpr (sizeof(T) == 4)
        s = summarize_bits32(p, n, columns);
    else
        s = summarize_bits16(p, n, columns);
    const T limit = check_beyond ? kBeyond : static_cast<T>(kSpecial - 1);
    if (s.top > limit) {
        for (uint64_t i = 0; i < n; ++i) {
            const T a = p[i] & kAbsMask;
            if (a > kSpecial)
                report(ValueEvent::nan, i);
            else if (a == kSpecial)
                report(ValueEvent::inf, i);
            else if (check_beyond && a > kBeyond)
                report(ValueEvent::beyond_f16, i);
        }
    }
    return s.any != 0;
}

template <typename Report>
bool scan_values(BitsKind kind, const void* codes, uint64_t n, uint8_t* columns, bool check_beyond, Report&& report) {
    switch (kind) {
        case BitsKind::f32:  // 0x477FE000 is 65504.0f
            return scan_bits<uint32_t, 0x7FFFFFFFu, 0x7F800000u, 0x477FE000u>(static_cast<const uint32_t*>(codes), n, columns, check_beyond,
                                                                              report);
        case BitsKind::f16:  // every finite F16 is within the F16 range
            return scan_bits<uint16_t, 0x7FFF, 0x7C00, 0x7BFF>(static_cast<const uint16_t*>(codes), n, columns, false, report);
        case BitsKind::bf16:  // 0x477F is 65280, the greatest BF16 below 65504
            return scan_bits<uint16_t, 0x7FFF, 0x7F80, 0x477F>(static_cast<const uint16_t*>(codes), n, columns, check_beyond, report);
    }
    return false;
}

}  // namespace mlens::fsck_detail
