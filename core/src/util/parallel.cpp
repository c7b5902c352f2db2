#include "mlens/util/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "mlens/util/out_of_memory.h"

namespace mlens {

namespace {

// How long a thread that ran out of work polls for more (the helpers' next batch, the caller's
// last items settled) before it blocks. A blocked thread's core may halt, and waking it again
// took 100 to 200 us on this project's 2-core virtual machine: for a statistics pass of a few
// milliseconds, made of two or three parallel_for calls back to back, that was a tenth of it.
// The price is up to this much CPU time per thread after each call. The poll yields the core
// every 64 pauses, so that a thread it could run (a preempted helper on a busy machine) runs,
// and is skipped once the pool has as many threads as there are cores (a caller that asked for
// more threads than cores): then a poller would only take a core from a thread with work.
constexpr std::chrono::microseconds kPollBeforeBlocking{200};

std::atomic<size_t> g_pool_threads{0};  // the pool's threads started, for poll_for

// Polls `done` until it holds or kPollBeforeBlocking has passed; returns its last answer.
template <typename Done>
bool poll_for(const Done& done) {
    if (done()) return true;
    static const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    if (g_pool_threads.load(std::memory_order_relaxed) >= cores) return false;
    const auto until = std::chrono::steady_clock::now() + kPollBeforeBlocking;
    for (unsigned n = 1;; ++n) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
        if (done()) return true;
        if (n % 64 == 0) {
            if (std::chrono::steady_clock::now() >= until) return false;
            std::this_thread::yield();
        }
    }
}

// One parallel_for call. Items are claimed in increasing order, by the caller and by any pool
// thread that picks the batch up; every claimed item is settled (run, or skipped once stopped),
// and the caller returns when all `count` are. A pool thread that arrives after the last claim
// finds nothing to do and touches only this shared state, never the caller's function.
struct Batch {
    Batch(uint64_t n, const std::function<bool(uint64_t)>& f) : count(n), fn(f) {}

    const uint64_t count;
    const std::function<bool(uint64_t)>& fn;
    std::atomic<uint64_t> next{0};
    std::atomic<uint64_t> settled{0};
    std::atomic<bool> stopped{false};
    std::mutex mutex;
    std::condition_variable all_settled;
    std::exception_ptr thrown;  // the first exception an item threw (under `mutex`)

    // fn(i), an exception it throws kept for the caller (on a pool thread it would end the
    // program) and taken as a failure.
    bool run(uint64_t i) {
        try {
            return fn(i);
        } catch (...) {
            std::lock_guard lock(mutex);
            if (!thrown) thrown = std::current_exception();
            return false;
        }
    }

    void work() {
        for (;;) {
            const uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= count) return;
            if (!stopped.load(std::memory_order_relaxed) && !run(i)) stopped.store(true, std::memory_order_relaxed);
            if (settled.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
                std::lock_guard lock(mutex);
                all_settled.notify_all();
            }
        }
    }

    void wait() {
        if (poll_for([&] { return settled.load(std::memory_order_acquire) == count; })) return;
        std::unique_lock lock(mutex);
        all_settled.wait(lock, [&] { return settled.load(std::memory_order_acquire) == count; });
    }
};

// Threads that live as long as the program, so that their per-thread buffers (decode and count
// buffers of several MB) are allocated once instead of at every call.
//
// A thread starts only while the address space could hold its stack and kThreadHeadroom beyond
// (for its first buffers and the rest of the program): under ulimit -v, what a command has left
// once its threads are up then no longer depends on how many stacks happened to fit. With too
// little, the calling thread does the work alone.
class Pool {
public:
    ~Pool() {
        {
            std::lock_guard lock(m_mutex);
            m_quit = true;
        }
        m_wake.notify_all();
        for (auto& t : m_threads) t.join();
    }

    // Offers the batch to `helpers` pool threads, starting threads up to that many; when no more
    // can be started (a thread limit, or too little address space left beside a new thread's
    // reserve), to the threads there are, if any.
    void offer(const std::shared_ptr<Batch>& batch, unsigned helpers) {
        {
            std::lock_guard lock(m_mutex);
            try {
                while (m_threads.size() < helpers && address_space_free(thread_reserve()))
                    m_threads.emplace_back([this] { run(); });
            } catch (const std::system_error&) {
            }
            g_pool_threads.store(m_threads.size(), std::memory_order_relaxed);
            helpers = std::min(helpers, static_cast<unsigned>(m_threads.size()));
            for (unsigned h = 0; h < helpers; ++h) m_queue.push_back(batch);
            m_queued.store(m_queue.size(), std::memory_order_relaxed);
        }
        if (helpers == 0) return;
        if (helpers == 1)
            m_wake.notify_one();
        else
            m_wake.notify_all();
    }

private:
    // Address space that must stay free beside a new thread's stack.
    static constexpr size_t kThreadHeadroom = size_t{24} << 20;

    // A new thread's stack (glibc's default, from RLIMIT_STACK) plus kThreadHeadroom.
    static size_t thread_reserve() {
        size_t stack = size_t{8} << 20;
        pthread_attr_t attr;
        if (::pthread_getattr_default_np(&attr) == 0) {
            size_t size = 0;
            if (::pthread_attr_getstacksize(&attr, &size) == 0 && size != 0) stack = size;
            ::pthread_attr_destroy(&attr);
        }
        return stack + kThreadHeadroom;
    }

    void run() {
        for (;;) {
            std::shared_ptr<Batch> batch;
            poll_for([&] { return m_queued.load(std::memory_order_relaxed) != 0; });
            {
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock, [&] { return m_quit || !m_queue.empty(); });
                if (m_queue.empty()) return;
                batch = std::move(m_queue.front());
                m_queue.pop_front();
                m_queued.store(m_queue.size(), std::memory_order_relaxed);
            }
            batch->work();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::shared_ptr<Batch>> m_queue;
    std::atomic<size_t> m_queued{0};  // m_queue's size, for polling without the lock
    std::vector<std::thread> m_threads;
    bool m_quit = false;
};

Pool& pool() {
    static Pool p;
    return p;
}

}  // namespace

bool parallel_for(uint64_t count, unsigned threads, const std::function<bool(uint64_t)>& fn) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<uint64_t>({threads, std::max<uint64_t>(count, 1), kMaxParallelThreads}));
    auto batch = std::make_shared<Batch>(count, fn);
    if (threads > 1) pool().offer(batch, threads - 1);
    batch->work();
    batch->wait();
    if (batch->thrown) std::rethrow_exception(batch->thrown);
    return !batch->stopped.load();
}

}  // namespace mlens
