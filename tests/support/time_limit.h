// Time limits of the malformed-input cases. The spec's limits are for release builds; the
// sanitizer build runs several times slower, so its limits are kSlowdown times longer.
#pragma once

#include <chrono>

namespace mlens::test {

#ifdef __SANITIZE_ADDRESS__
inline constexpr double kSlowdown = 4.0;
#else
inline constexpr double kSlowdown = 1.0;
#endif

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace mlens::test
