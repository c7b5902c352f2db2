#include "job_runner.h"

#include <algorithm>
#include <system_error>

namespace mlens {

JobRunner::JobRunner(std::function<void()> wake) : m_wake(std::move(wake)) {
    const size_t count = std::max<size_t>(kMinPoolThreads, 2 * std::thread::hardware_concurrency());
    for (size_t i = 0; i < count; ++i) {
        try {
            m_threads.emplace_back([this] { work_loop(); });
        } catch (const std::system_error&) {
            // A thread limit or a tight address space: the jobs run on the threads there are.
            if (m_threads.empty()) throw;
            break;
        }
    }
}

JobRunner::~JobRunner() {
    {
        std::lock_guard lock(m_mutex);
        for (const JobPtr& job : m_jobs) job->cancel();
        m_stopping = true;
    }
    m_queued.notify_all();
    for (std::thread& t : m_threads) t.join();
}

void JobRunner::enqueue(JobPtr job) {
    m_jobs.push_back(job);
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(std::move(job));
        ++m_unfinished;
    }
    m_queued.notify_one();
}

void JobRunner::work_loop() {
    for (;;) {
        JobPtr job;
        {
            std::unique_lock lock(m_mutex);
            m_queued.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            // On stop the queue is still drained: every job was cancelled, so each ends quickly
            // and done() holds for all of them.
            if (m_queue.empty()) return;
            job = std::move(m_queue.front());
            m_queue.pop_front();
        }
        job->run();
        job->m_context.report(1.0);
        job->m_done.store(true, std::memory_order_release);
        if (m_wake) m_wake();
        {
            std::lock_guard lock(m_mutex);
            --m_unfinished;
        }
        m_finished.notify_all();
    }
}

void JobRunner::reap() {
    std::erase_if(m_jobs, [](const JobPtr& job) { return job->done(); });
}

std::vector<JobPtr> JobRunner::jobs() const { return m_jobs; }

bool JobRunner::busy() const {
    return std::any_of(m_jobs.begin(), m_jobs.end(), [](const JobPtr& job) { return !job->done(); });
}

void JobRunner::wait_all() {
    std::unique_lock lock(m_mutex);
    m_finished.wait(lock, [this] { return m_unfinished == 0; });
    lock.unlock();
    m_jobs.clear();
}

}  // namespace mlens
