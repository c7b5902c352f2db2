#include "mlens/quant/minifloat.h"

#include <array>
#include <cmath>
#include <limits>

namespace mlens {

namespace {

constexpr float kE2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

std::array<float, 256> make_e4m3() {
    std::array<float, 256> t{};
    for (int b = 0; b < 256; ++b) {
        int exp = (b >> 3) & 0xF, mant = b & 7;
        float v = exp == 0 ? std::ldexp(static_cast<float>(mant), -9)  // mant/8 * 2^-6
                           : std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp - 7);
        if ((b & 0x7F) == 0x7F) v = std::numeric_limits<float>::quiet_NaN();
        t[b] = (b & 0x80) ? -v : v;
    }
    return t;
}

std::array<float, 256> make_e5m2() {
    std::array<float, 256> t{};
    for (int b = 0; b < 256; ++b) {
        int exp = (b >> 2) & 0x1F, mant = b & 3;
        float v;
        if (exp == 0x1F)
            v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
        else if (exp == 0)
            v = std::ldexp(static_cast<float>(mant), -16);  // mant/4 * 2^-14
        else
            v = std::ldexp(1.0f + static_cast<float>(mant) / 4.0f, exp - 15);
        t[b] = (b & 0x80) ? -v : v;
    }
    return t;
}

const std::array<float, 256> kE4m3 = make_e4m3();
const std::array<float, 256> kE5m2 = make_e5m2();

// The code below `end` whose magnitude in `table` (code 0 being zero) is nearest to `a`; a tie
// goes to the even code.
uint8_t nearest_magnitude(const float* table, uint8_t end, float a) {
    uint8_t best = 0;
    float best_err = a;
    for (uint8_t c = 1; c < end; ++c) {
        float err = std::fabs(table[c] - a);
        if (err < best_err || (err == best_err && (c & 1) == 0)) {
            best = c;
            best_err = err;
        }
    }
    return best;
}

}  // namespace

float e2m1_value(uint8_t code) {
    float v = kE2m1[code & 7];
    return (code & 8) ? -v : v;
}

float e4m3_value(uint8_t byte) { return kE4m3[byte]; }
float e5m2_value(uint8_t byte) { return kE5m2[byte]; }

float e8m0_value(uint8_t byte, E8m0Nan top) {
    if (byte == 0xFF) return top == E8m0Nan::nan ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    return std::ldexp(1.0f, static_cast<int>(byte) - 127);
}

uint8_t e4m3_from_float(float x) {
    if (std::isnan(x)) return 0x7F;
    // 126 finite magnitudes; a linear scan keeps the rounding rule obvious.
    return static_cast<uint8_t>((std::signbit(x) ? 0x80 : 0) | nearest_magnitude(kE4m3.data(), 0x7F, std::fabs(x)));
}

uint8_t e2m1_from_float(float x) { return static_cast<uint8_t>((std::signbit(x) ? 8 : 0) | nearest_magnitude(kE2m1, 8, std::fabs(x))); }

}  // namespace mlens
