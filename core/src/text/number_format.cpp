#include "mlens/text/number_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mlens {

namespace {

std::string scaled(double value, const char* const* units, int n_units, double step) {
    int u = 0;
    while (value >= step && u + 1 < n_units) {
        value /= step;
        ++u;
    }
    char buf[48];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%.0f%s", value, units[0]);
    else
        std::snprintf(buf, sizeof buf, value < 10 ? "%.2f%s" : value < 100 ? "%.1f%s" : "%.0f%s", value, units[u]);
    return buf;
}

}  // namespace

std::string significant(double v, int digits) {
    digits = std::clamp(digits, 1, 17);
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (v == 0) return "0";
    char buf[64];
    const double magnitude = std::fabs(v);
    if (magnitude >= 1e-3 && magnitude < std::pow(10.0, digits)) {
        // Decimals so that `digits` significant digits remain, measured after rounding (0.0999
        // rounds to 0.1, which needs one decimal fewer than 0.0999 did).
        int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
        int decimals = std::max(0, digits - 1 - exponent);
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
        double rounded = std::fabs(std::strtod(buf, nullptr));
        if (rounded > 0 && static_cast<int>(std::floor(std::log10(rounded))) > exponent && decimals > 0)
            std::snprintf(buf, sizeof buf, "%.*f", decimals - 1, v);
        std::string text = buf;
        if (text.find('.') != std::string::npos) {
            text.erase(text.find_last_not_of('0') + 1);
            if (text.back() == '.') text.pop_back();
        }
        return text;
    }
    std::snprintf(buf, sizeof buf, "%.*e", std::max(0, digits - 2), v);
    return buf;
}

std::pair<std::string, std::string> plus_minus(double v, double err) {
    if (!(err > 0) || !std::isfinite(err) || !std::isfinite(v)) return {significant(v, 6), significant(err)};
    // Decimals that leave two significant digits of err (none when err is 10 or more).
    const int exponent = static_cast<int>(std::floor(std::log10(err)));
    int decimals = std::clamp(1 - exponent, 0, 15);
    char e[64], x[64];
    std::snprintf(e, sizeof e, "%.*f", decimals, err);
    // 0.0999 rounds to 0.10: two significant digits then need one decimal fewer.
    if (decimals > 0 && std::strtod(e, nullptr) >= std::pow(10.0, exponent + 1)) std::snprintf(e, sizeof e, "%.*f", --decimals, err);
    std::snprintf(x, sizeof x, "%.*f", decimals, v);
    return {x, e};
}

std::string table_number(double v) { return significant(v, 4); }

std::string cosine_text(double v) {
    if (!std::isfinite(v)) return significant(v);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return buf;
}

std::string probability_text(double p) { return significant(p, 3); }

std::string percent_text(double fraction) { return significant(100 * fraction, 3) + "%"; }

std::string plus_minus_text(double v, double err) {
    auto [value, error] = plus_minus(v, err);
    return value + " \xC2\xB1 " + error;
}

std::string mib_text(uint64_t bytes) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
    return buf;
}

std::string bits_per_weight_text(double bpw) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f", bpw);
    return buf;
}

std::string human_bytes(uint64_t bytes) {
    static const char* const kUnits[] = {" B", " kB", " MB", " GB", " TB", " PB"};
    return scaled(static_cast<double>(bytes), kUnits, 6, 1000.0);
}

std::string human_count(uint64_t count) {
    static const char* const kUnits[] = {"", " K", " M", " B", " T"};
    return scaled(static_cast<double>(count), kUnits, 5, 1000.0);
}

}  // namespace mlens
