#include "fsck_scan.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/vector_loop.h"

namespace mlens::fsck_detail {

void Accumulator::add(const FsckLocation& at, uint64_t n, std::optional<double> value) {
    if (count == 0) first_value = value;
    count += n;
    if (locations.size() < kFsckMaxLocations) locations.push_back(at);
}

void Accumulator::merge(Accumulator&& other) {
    if (other.count == 0) return;
    const bool other_first =
        count == 0 || (!other.locations.empty() && !locations.empty() && other.locations.front().element < locations.front().element);
    if (other_first) {
        first_value = other.first_value;
        if (!other.first_reason.empty()) first_reason = std::move(other.first_reason);
    }
    count += other.count;
    locations.insert(locations.end(), other.locations.begin(), other.locations.end());
    std::stable_sort(locations.begin(), locations.end(),
                     [](const FsckLocation& a, const FsckLocation& b) { return a.element < b.element; });
    if (locations.size() > kFsckMaxLocations) locations.resize(kFsckMaxLocations);
}

Accumulator& FindingSet::at(ErrorCode code, const std::string& field, FindingSeverity severity) {
    Accumulator& a = by_key[{code, field}];
    a.severity = severity;
    return a;
}

void FindingSet::merge(FindingSet&& other) {
    for (auto& [key, acc] : other.by_key) {
        Accumulator& mine = by_key[key];
        mine.severity = acc.severity;
        mine.merge(std::move(acc));
    }
}

std::vector<GgmlScaleField> ggml_scale_fields(uint32_t type) {
    std::vector<GgmlScaleField> fields;
    if (const GgmlTypeRow* row = ggml_type_row(type))
        for (const GgmlScaleField& f : row->scales())
            if (f.encoding != ScaleEncoding::ue4m3) fields.push_back(f);
    return fields;
}

ScaleClass classify_scale(ScaleEncoding encoding, const uint8_t* at) {
    switch (encoding) {
        case ScaleEncoding::f16: {
            const unsigned a = (at[0] | (at[1] << 8)) & 0x7FFFu;
            if (a > 0x7C00) return ScaleClass::nan;
            if (a == 0x7C00) return ScaleClass::inf;
            if (a == 0) return ScaleClass::zero;
            return a < 0x0400 ? ScaleClass::subnormal : ScaleClass::normal;
        }
        case ScaleEncoding::f32: {
            uint32_t bits;
            std::memcpy(&bits, at, 4);
            const uint32_t a = bits & 0x7FFFFFFFu;
            if (a > 0x7F800000u) return ScaleClass::nan;
            if (a == 0x7F800000u) return ScaleClass::inf;
            if (a == 0) return ScaleClass::zero;
            return a < 0x00800000u ? ScaleClass::subnormal : ScaleClass::normal;
        }
        case ScaleEncoding::e8m0:
            return at[0] == 0xFF ? ScaleClass::nan : ScaleClass::normal;
        case ScaleEncoding::ue4m3:
            break;
    }
    return ScaleClass::normal;
}

ScaleClass classify_value(float v, float min_normal) {
    if (std::isnan(v)) return ScaleClass::nan;
    if (std::isinf(v)) return ScaleClass::inf;
    if (v == 0.0f) return ScaleClass::zero;
    return std::fabs(v) < min_normal ? ScaleClass::subnormal : ScaleClass::normal;
}

namespace {

template <typename T, T kAbsMask>
inline BitsSummary summarize(const T* p, uint64_t n, uint8_t* columns) {
    T any = 0, top = 0;
    if (columns) {
        for (uint64_t i = 0; i < n; ++i) {
            const T a = p[i] & kAbsMask;
            any |= a;
            top = a > top ? a : top;
            columns[i] |= static_cast<uint8_t>(a != 0);
        }
    } else {
        for (uint64_t i = 0; i < n; ++i) {
            const T a = p[i] & kAbsMask;
            any |= a;
            top = a > top ? a : top;
        }
    }
    return {any, top};
}

}  // namespace

MLENS_VECTOR_LOOP BitsSummary summarize_bits32(const uint32_t* p, uint64_t n, uint8_t* columns) {
    return summarize<uint32_t, 0x7FFFFFFFu>(p, n, columns);
}

MLENS_VECTOR_LOOP BitsSummary summarize_bits16(const uint16_t* p, uint64_t n, uint8_t* columns) {
    return summarize<uint16_t, 0x7FFF>(p, n, columns);
}

uint64_t mix64(uint64_t x) {
    x ^= x >> 32;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 32;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 32;
    return x;
}

namespace {

constexpr uint64_t kPrime = 0x9E3779B97F4A7C15ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t lane(uint64_t h, uint64_t w) { return rotl((h ^ w) * kPrime, 29); }

}  // namespace

MLENS_VECTOR_LOOP uint64_t hash_bytes(const void* data, uint64_t n, uint64_t seed) {
    // kLanes independent lanes over 64-byte steps: the multiplies of one step overlap (or share
    // one vector instruction), so the hash costs a fraction of the decode it runs beside.
    constexpr int kLanes = 8;
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t h[kLanes];
    for (int i = 0; i < kLanes; ++i) h[i] = seed * (2 * i + 1) + 0x243F6A8885A308D3ull * (i + 1);
    uint64_t w[kLanes];
    const uint64_t total = n;
    for (; n >= sizeof w; n -= sizeof w, p += sizeof w) {
        std::memcpy(w, p, sizeof w);
        for (int i = 0; i < kLanes; ++i) h[i] = lane(h[i], w[i]);
    }
    if (n) {
        std::memset(w, 0, sizeof w);
        std::memcpy(w, p, n);
        for (int i = 0; i < kLanes; ++i) h[i] = lane(h[i], w[i]);
    }
    uint64_t folded = total;
    for (int i = 0; i < kLanes; ++i) folded ^= rotl(h[i], 7 * i + 1);
    return mix64(folded);
}

}  // namespace mlens::fsck_detail
