#include "mlens/infer/threads.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

namespace mlens {

namespace {

struct CpuTimes {
    unsigned long long busy = 0;
    unsigned long long total = 0;
};

// The aggregate "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal.
std::optional<CpuTimes> read_cpu_times() {
    std::ifstream in("/proc/stat");
    std::string label;
    if (!(in >> label) || label != "cpu") return std::nullopt;
    unsigned long long v[8] = {};
    for (auto& x : v)
        if (!(in >> x)) return std::nullopt;
    CpuTimes t;
    for (auto x : v) t.total += x;
    t.busy = t.total - v[3] - v[4];
    return t;
}

}  // namespace

int online_cores() {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = online > 0 ? static_cast<int>(online) : 1;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int allowed = CPU_COUNT(&set);
        if (allowed > 0) cores = std::min(cores, allowed);
    }
    return std::max(cores, 1);
}

std::optional<double> busy_cores(int sample_ms) {
    auto before = read_cpu_times();
    std::this_thread::sleep_for(std::chrono::milliseconds(sample_ms));
    auto after = read_cpu_times();
    if (!before || !after || after->total <= before->total) return std::nullopt;
    // /proc/stat counts every online CPU; the affinity mask may allow fewer.
    const double online = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    const double busy_share = static_cast<double>(after->busy - before->busy) / static_cast<double>(after->total - before->total);
    return std::clamp(busy_share * online, 0.0, online);
}

ThreadChoice choose_threads(int requested) {
    const int cores = online_cores();
    ThreadChoice choice;
    if (requested >= 1) {
        choice.threads = std::min(requested, cores);
        if (requested > cores)
            choice.note = "--threads " + std::to_string(requested) + " capped to the " + std::to_string(cores) + " online core" +
                (cores == 1 ? "" : "s");
        return choice;
    }
    const std::optional<double> busy_now = busy_cores(kIdleSampleMs);
    if (!busy_now) {
        choice.threads = cores;
        return choice;
    }
    const long online = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    const double idle_cores = std::min(static_cast<double>(cores), static_cast<double>(online) - *busy_now);
    choice.threads = std::clamp(static_cast<int>(std::lround(idle_cores)), 1, cores);
    char busy[32];
    std::snprintf(busy, sizeof busy, "%.1f", *busy_now);
    choice.note = std::to_string(choice.threads) + " thread" + (choice.threads == 1 ? "" : "s") + " (default: " + std::to_string(cores) +
        " core" + (cores == 1 ? "" : "s") + ", " + busy + " busy)";
    return choice;
}

}  // namespace mlens
