#include "mlens/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace mlens {

bool parallel_for(uint64_t count, unsigned threads, const std::function<bool(uint64_t)>& fn) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<uint64_t>(threads, std::max<uint64_t>(count, 1)));
    std::atomic<uint64_t> next{0};
    std::atomic<bool> stopped{false};
    auto worker = [&] {
        for (;;) {
            if (stopped.load(std::memory_order_relaxed)) return;
            uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= count) return;
            if (!fn(i)) stopped.store(true, std::memory_order_relaxed);
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    return !stopped.load();
}

}  // namespace mlens
