// Axis arithmetic for the plots of the app and of `mlens hist --png`, free of ImGui so both use
// it and it is tested on its own.
//
// Contract:
//  - nice_ticks returns tick values inside [lo, hi] spaced by a "nice" step (1, 2 or 5 × 10^k)
//    chosen so that at most `max_ticks` ticks fit; when that leaves fewer than two inside, the
//    next finer steps (up to max_ticks + 2 ticks) are tried. Empty when the range is empty or not
//    finite.
//  - tick_label formats a tick so neighbouring ticks of that step read differently: fixed
//    notation with as many decimals as the step needs (at most 6), scientific ("1.5e-07") for
//    very small or very large magnitudes. Negative zero prints as "0".
//  - count_label: compact counts, "950", "1.2k", "3.4M", "2.0G".
//  - log_ticks: 0 and the powers of ten up to `max_count` (counts axis in log mode).
//  - decade_ticks: the powers of ten from 1 up to the first one >= max_count (at least 1 and 10):
//    the decades of a log10(count) axis whose top is the last of them.
//  - LogMap maps a count to [0, 1] of the axis height: linear c / max, or log10(1 + c) / log10(1 + max).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mlens {

double nice_step(double range, int max_ticks);
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);
std::string tick_label(double value, double step);
std::string count_label(double count);
std::vector<uint64_t> log_ticks(uint64_t max_count);
std::vector<uint64_t> decade_ticks(uint64_t max_count);

struct CountScale {
    bool log = false;
    double max = 1;  // the count at the top of the axis (>= 1)
    double fraction(double count) const;
};

}  // namespace mlens
