#include "keyed_hash.h"

#include <random>

namespace mlens {

namespace {

constexpr uint64_t kPrime = (1ull << 61) - 1;

uint64_t mul_mod(uint64_t a, uint64_t b) {
    unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    uint64_t r = (static_cast<uint64_t>(p) & kPrime) + static_cast<uint64_t>(p >> 61);
    return r >= kPrime ? r - kPrime : r;
}

uint64_t random_base() {
    std::random_device device;
    uint64_t r = (static_cast<uint64_t>(device()) << 32) | device();
    return 2 + r % (kPrime - 3);
}

}  // namespace

uint64_t KeyedHash::operator()(std::string_view s) const {
    static const uint64_t base = random_base();
    uint64_t h = 0;
    // Byte values enter as 1..256 so that leading NULs still change the value.
    for (unsigned char c : s) {
        h = mul_mod(h, base) + c + 1;
        if (h >= kPrime) h -= kPrime;
    }
    // Spread the value over all 64 bits (a bijection): table slots use the low bits, tags the high.
    return h * 0x9E3779B97F4A7C15ull;
}

}  // namespace mlens
