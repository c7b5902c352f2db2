// Equal histogram bins over [lo, hi] as statistics compute them, shared by the value and the
// code-group passes so that all put a value in the same bin. Internal to core/quant.
//
// Contract: numpy's np.histogram over the values as float64. Bin j of `bins` holds the x with
// edge(j) <= x < edge(j + 1), edge(j) = j * ((hi - lo) / bins) + lo in double as numpy.linspace
// computes it, the last bin also holding hi; slot 0 counts the values below lo, slot 1 + j bin
// j, slot bins + 1 the values above hi. `refined(shift)` splits each bin in 2^shift: its edges at
// multiples of 2^shift are this binning's, bit for bit, so a value's fine bin shifted right by
// `shift` is its bin here.
//
// How a bin is found: a candidate floor((x - lo) * scale) in float, then settled against the
// edges, each held as the least float at or above it (a float x >= edge exactly when x >= that
// float). Where `settles_in_one`, the candidate is at most one bin off, and only when it lies
// within `doubt` of a whole number; elsewhere (a float scale that overflows, a range narrow
// against its distance from 0, over 2^20 bins) bin_slots searches the edges instead, and the
// passes that bin in vectors are not used (stats.cpp).
//
// Decision: numpy's rule, not the float candidate alone. The candidate put exact zeros of a
// symmetric range in the bin below 0 (its float scale rounds down), where numpy and gguf-py's
// users count them in the bin from 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

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

struct Binning {
    double lo = 0, hi = 0;
    float scale = 0;
    uint32_t bins = 0;
    // Bins + 1 floats: entry j the least float at or above edge(j), for 0 < j < bins; entry 0 is
    // -inf and entry `bins` +inf, so that settling never leaves [0, bins - 1].
    std::shared_ptr<const std::vector<float>> edges;
    // How near a whole number the unrounded candidate t must lie for the candidate to be a bin off
    // (its proven error, twice over); settles_in_one: that error is under half a bin.
    float doubt = 0;
    bool settles_in_one = false;

    static Binning over(double lo, double hi, uint32_t bins);
    uint32_t slots() const { return bins + 2; }
    Binning refined(uint32_t shift) const { return over(lo, hi, bins << shift); }

    // Bin of a value in [lo, hi] by a search of the edges (any binning).
    uint32_t searched_bin(float x) const;
    // Defined in stats.cpp, a vector loop over BinSlots (or searched_bin where the candidate
    // does not settle in one).
    void bin_slots(const float* v, uint64_t n, uint32_t* slot) const;
};

// A Binning's constants, for loops that bin values one at a time: every path that bins a value
// does it here or in binning_avx512.h, with the same candidate and edges, so all put a value in
// the same slot. For binnings that settle in one.
struct BinSlots {
    float first, scale, last, lowest, highest, doubt;
    int32_t above;
    const float* edge;
    // lo and the bin width in double, for edges computed rather than looked up (binning_avx512.h).
    double low, width;

    explicit BinSlots(const Binning& b)
        : first(static_cast<float>(b.lo)),
          scale(b.scale),
          last(static_cast<float>(b.bins - 1)),
          lowest(float_at_least(b.lo)),
          highest(float_at_most(b.hi)),
          doubt(b.doubt),
          above(static_cast<int32_t>(b.bins) + 1),
          edge(b.edges->data()),
          low(b.lo),
          width((b.hi - b.lo) / b.bins) {}

    // Candidate bin b of x (in [0, bins - 1]) settled against the edges: in [0, bins], `bins` only
    // for x = +inf.
    [[gnu::always_inline]] int32_t settled(float x, int32_t b) const {
        b -= x < edge[b];
        b += x >= edge[b + 1];
        return b;
    }

    // The bin of x in [lo, hi]; a bin in [0, bins - 1] for any other x, NaN included.
    [[gnu::always_inline]] int32_t bin(float x) const {
        float t = (x - first) * scale;
        t = t > 0 ? t : 0;
        t = t < last ? t : last;
        return settled(x, static_cast<int32_t>(t));
    }

    [[gnu::always_inline]] uint32_t operator()(float x) const {
        int32_t s = bin(x) + 1;
        s = x < lowest ? 0 : s;
        s = x > highest ? above : s;
        return static_cast<uint32_t>(s);
    }
};

}  // namespace mlens
