#include "memory_watch.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace mlens::test {

namespace {

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"); 0 when it cannot be read.
uint64_t status_bytes(const std::string& field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.starts_with(field + ":")) return std::stoull(line.substr(field.size() + 1)) * 1024;
    return 0;
}

}  // namespace

uint64_t peak_growth_bytes(const std::function<void()>& work) {
    std::ofstream("/proc/self/clear_refs") << "5";
    const uint64_t before = status_bytes("VmRSS");
    work();
    const uint64_t peak = status_bytes("VmHWM");
    return peak > before ? peak - before : 0;
}

uint64_t run_cancelled_after_progress(const std::function<void(JobContext*)>& work) {
    JobContext job;
    std::atomic<bool> done{false};
    std::thread watcher([&] {
        while (!done && job.progress() <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        job.cancel();
    });
    const uint64_t grew = peak_growth_bytes([&] { work(&job); });
    done = true;
    watcher.join();
    return grew;
}

}  // namespace mlens::test
