// Time limits of the malformed-input cases. The spec's limits are for release builds; the
// sanitizer build runs several times slower, so its limits are kSlowdown times longer.
//
// A limit on how much work a parse does is measured in CPU time (CpuStopwatch: every thread of
// this process), which other programs keeping the cores busy do not stretch; seconds_since()
// is wall-clock time, for limits on waiting (a hang, a worker that never answers).
#pragma once

#include <time.h>

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

class CpuStopwatch {
public:
    CpuStopwatch() : m_start(now()) {}
    double seconds() const { return now() - m_start; }

private:
    static double now() {
        timespec t{};
        ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
    }
    double m_start;
};

}  // namespace mlens::test
