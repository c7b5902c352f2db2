// Equal histogram bins over [lo, hi] as statistics compute them, shared by the value and the
// code-group passes so that both put a value in the same bin. Internal to core/quant.
//
// Contract: bin_slots() maps a value to slot 0 (below lo), 1 + its bin, or bins + 1 (above hi);
// a value's bin is floor((x - lo) * scale) computed in float with scale = bins / (hi - lo)
// rounded to float, the last bin also holding hi.
#pragma once

#include <cmath>
#include <cstdint>

namespace mlens {

// The least float >= x and the greatest float <= x: for a float v, v < x exactly when v <
// float_at_least(x), and v > x exactly when v > float_at_most(x).
inline float float_at_least(double x) {
    const auto f = static_cast<float>(x);
    return static_cast<double>(f) < x ? std::nextafter(f, INFINITY) : f;
}
inline float float_at_most(double x) {
    const auto f = static_cast<float>(x);
    return static_cast<double>(f) > x ? std::nextafter(f, -INFINITY) : f;
}

// Equal bins over [lo, hi]; bin_slots() maps a value to slot 0 (below lo), 1 + its bin, or
// bins + 1 (above hi). A value's bin is floor((x - lo) * scale) computed in float, the last bin
// also holding hi.
struct Binning {
    double lo = 0, hi = 0;
    float scale = 0;
    uint32_t bins = 0;

    static Binning over(double lo, double hi, uint32_t bins) { return {lo, hi, static_cast<float>(bins / (hi - lo)), bins}; }
    uint32_t slots() const { return bins + 2; }

    // The same bins split in 2^shift: (x - lo) * scale * 2^shift rounds exactly as (x - lo) *
    // scale times 2^shift, so a value's fine bin shifted right by `shift` is its bin here.
    Binning refined(uint32_t shift) const { return {lo, hi, std::ldexp(scale, static_cast<int>(shift)), bins << shift}; }

    // Defined in stats.cpp, a vector loop over BinSlots.
    void bin_slots(const float* v, uint64_t n, uint32_t* slot) const;
};

// A Binning's constants in float, for loops that bin values one at a time: every path that bins
// a value does it here, with the same float operations, so all put a value in the same slot.
struct BinSlots {
    float first, scale, last, lowest, highest;
    int32_t above;

    explicit BinSlots(const Binning& b)
        : first(static_cast<float>(b.lo)), scale(b.scale), last(static_cast<float>(b.bins - 1)), lowest(float_at_least(b.lo)),
          highest(float_at_most(b.hi)), above(static_cast<int32_t>(b.bins) + 1) {}

    [[gnu::always_inline]] uint32_t operator()(float x) const {
        float t = (x - first) * scale;
        t = t > 0 ? t : 0;
        t = t < last ? t : last;
        int32_t s = static_cast<int32_t>(t) + 1;
        s = x < lowest ? 0 : s;
        s = x > highest ? above : s;
        return static_cast<uint32_t>(s);
    }
};

}  // namespace mlens
