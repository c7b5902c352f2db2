#include "mlens/text/significant.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mlens {

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

std::string percent_text(double fraction) { return significant(100 * fraction, 3) + "%"; }

std::string plus_minus_text(double v, double err) {
    auto [value, error] = plus_minus(v, err);
    return value + " \xC2\xB1 " + error;
}

}  // namespace mlens
