// JobRunner: runs long core operations on worker threads so the window never waits for them.
//
// Contract:
//  - start() runs `work` on a new std::thread with its own JobContext and returns at once. The
//    work reports progress and checks cancellation through that context (mlens/job.h).
//  - Job::done() becomes true (release) after `work` returned, so whatever the work wrote into
//    state it captured is safe to read on the main thread once done() is seen (acquire).
//  - After each job finishes, the runner calls the wake callback from the worker thread (the
//    window loop posts an empty event there so an idle loop redraws).
//  - reap() joins finished threads; the destructor cancels every job and joins all threads.
//  - Used from the main thread only (start, reap, jobs, wait_all); Job is shared with workers.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mlens/job.h"

namespace mlens {

class Job {
public:
    explicit Job(std::string name) : m_name(std::move(name)) {}
    const std::string& name() const { return m_name; }
    double progress() const { return m_context.progress(); }
    bool done() const { return m_done.load(std::memory_order_acquire); }
    void cancel() { m_context.cancel(); }
    bool cancelled() const { return m_context.cancelled(); }

private:
    friend class JobRunner;
    std::string m_name;
    JobContext m_context;
    std::atomic<bool> m_done{false};
};

using JobPtr = std::shared_ptr<Job>;

class JobRunner {
public:
    explicit JobRunner(std::function<void()> wake = {}) : m_wake(std::move(wake)) {}
    ~JobRunner();
    JobRunner(const JobRunner&) = delete;
    JobRunner& operator=(const JobRunner&) = delete;

    JobPtr start(std::string name, std::function<void(JobContext&)> work);
    void reap();
    // Jobs whose threads have not been reaped yet (running, or done since the last reap).
    std::vector<JobPtr> jobs() const;
    bool busy() const;
    // Blocks until every started job is done (headless drivers and tests).
    void wait_all();

private:
    struct Entry {
        JobPtr job;
        std::thread thread;
    };
    std::vector<Entry> m_entries;
    std::function<void()> m_wake;
};

}  // namespace mlens
