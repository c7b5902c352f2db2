#include "plot_axes.h"

#include <cmath>
#include <cstdio>

namespace mlens {

double nice_step(double range, int max_ticks) {
    if (!(range > 0) || !std::isfinite(range) || max_ticks < 1) return 0;
    double raw = range / max_ticks;
    double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * magnitude >= raw * (1 - 1e-9)) return m * magnitude;
    return 10 * magnitude;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
    std::vector<double> out;
    // A coarse step can leave one tick inside the range (0.2 over [-0.1999, 0.1998]); finer steps
    // are tried, up to max_ticks + 2 of them, until at least two ticks are inside.
    for (int wanted = max_ticks; wanted <= max_ticks + 2 && out.size() < 2; ++wanted) {
        out.clear();
        double step = nice_step(hi - lo, wanted);
        if (step <= 0) return out;
        double first = std::ceil(lo / step - 1e-9);
        double last = std::floor(hi / step + 1e-9);
        for (double k = first; k <= last && out.size() <= static_cast<size_t>(wanted) + 1; k += 1) {
            double v = k * step;
            out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
        }
    }
    return out;
}

std::string tick_label(double value, double step) {
    char buf[48];
    double magnitude = std::max(std::fabs(value), std::fabs(step));
    if (value == 0) return "0";
    if (magnitude >= 1e6 || std::fabs(step) < 1e-5) {
        int digits = 1;
        if (step > 0) digits = std::max(0, static_cast<int>(std::ceil(std::log10(std::fabs(value) / step) - 1e-9)));
        std::snprintf(buf, sizeof buf, "%.*e", std::min(digits, 6), value);
        return buf;
    }
    int decimals = step >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string count_label(double count) {
    char buf[32];
    static const char* const kUnits[] = {"", "k", "M", "G", "T"};
    int unit = 0;
    while (count >= 1000 && unit < 4) {
        count /= 1000;
        ++unit;
    }
    if (unit == 0)
        std::snprintf(buf, sizeof buf, "%.0f", count);
    else
        std::snprintf(buf, sizeof buf, count < 10 ? "%.1f%s" : "%.0f%s", count, kUnits[unit]);
    return buf;
}

std::vector<uint64_t> log_ticks(uint64_t max_count) {
    std::vector<uint64_t> out = {0};
    for (uint64_t p = 1; p <= max_count; p *= 10) {
        out.push_back(p);
        if (p > UINT64_MAX / 10) break;
    }
    return out;
}

std::vector<uint64_t> decade_ticks(uint64_t max_count) {
    std::vector<uint64_t> out = {1, 10};
    while (out.back() < max_count && out.back() <= UINT64_MAX / 10) out.push_back(out.back() * 10);
    return out;
}

double CountScale::fraction(double count) const {
    double top = max < 1 ? 1 : max;
    if (count <= 0) return 0;
    return log ? std::log10(1 + count) / std::log10(1 + top) : count / top;
}

}  // namespace mlens
