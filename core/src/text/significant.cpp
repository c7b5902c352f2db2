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

}  // namespace mlens
