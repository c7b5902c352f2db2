// JobRunner: runs long core operations on a small pool of worker threads so the window never waits
// for them, and hands each job's typed result back to the main thread.
//
// Contract:
//  - start(name, fn) queues `fn(JobContext&) -> Result<T>` and returns a JobHandle<T> at once. The
//    pool has a fixed number of threads (twice the online cores, at least kMinPoolThreads): jobs
//    such as a generation or a health scan run for minutes, and opening a file must not wait
//    behind two of them; jobs beyond that wait in order. When the process cannot start that many
//    (a thread limit, a tight ulimit -v), the pool is the threads it could start; with none, the
//    constructor throws the std::system_error. The work reports progress and checks cancellation
//    through its context (mlens/job.h).
//  - Work that throws std::bad_alloc (a memory limit) ends its job with E_NO_MEMORY
//    (out_of_memory.h) as its result instead of ending the program.
//  - Job::done() becomes true (release) after the work returned and its result was stored, so the
//    result is safe to read on the main thread once done() is seen (acquire).
//  - JobHandle<T>::try_take() returns nothing while the job runs; once it is done it returns the
//    Result<T> and empties the handle, so a handle that is set means a job still to be collected.
//  - After each job finishes, the runner calls the wake callback from the worker thread (the
//    window loop posts an empty event there so an idle loop redraws).
//  - reap() forgets finished jobs; the destructor cancels every job, lets the queued ones run
//    cancelled (so each ends done) and joins the pool.
//  - Used from the main thread only (start, reap, jobs, busy, wait_all); Job is shared with workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "mlens/job.h"
#include "mlens/result.h"
#include "mlens/util/out_of_memory.h"

namespace mlens {

// What every job shows the shell, whatever its result type: name, progress, done, cancel.
class Job {
public:
    explicit Job(std::string name) : m_name(std::move(name)) {}
    virtual ~Job() = default;
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;

    const std::string& name() const { return m_name; }
    double progress() const { return m_context.progress(); }
    bool done() const { return m_done.load(std::memory_order_acquire); }
    void cancel() { m_context.cancel(); }
    bool cancelled() const { return m_context.cancelled(); }

protected:
    JobContext& context() { return m_context; }

private:
    friend class JobRunner;
    // Runs the work on a worker thread and stores its result.
    virtual void run() = 0;

    std::string m_name;
    JobContext m_context;
    std::atomic<bool> m_done{false};
};

using JobPtr = std::shared_ptr<Job>;

template <typename T>
class TypedJob final : public Job {
public:
    TypedJob(std::string name, std::function<Result<T>(JobContext&)> work) : Job(std::move(name)), m_work(std::move(work)) {}
    // Main thread, after done(): the stored result, moved out once.
    std::optional<Result<T>> take() { return std::exchange(m_result, std::nullopt); }

private:
    void run() override {
        try {
            m_result.emplace(m_work(context()));
        } catch (const std::bad_alloc&) {
            // The window stays: the job's panel shows why it stopped, as for any other error.
            m_result.emplace(out_of_memory_error("running " + name()));
        }
        m_work = nullptr;  // release what the work captured as soon as it has run
    }

    std::function<Result<T>(JobContext&)> m_work;
    std::optional<Result<T>> m_result;
};

// The main thread's hold on one running job and, once it is done, on its result.
template <typename T>
class JobHandle {
public:
    JobHandle() = default;
    explicit JobHandle(std::shared_ptr<TypedJob<T>> job) : m_job(std::move(job)) {}

    explicit operator bool() const { return m_job != nullptr; }
    bool done() const { return m_job && m_job->done(); }
    double progress() const { return m_job ? m_job->progress() : 0.0; }
    void cancel() {
        if (m_job) m_job->cancel();
    }
    bool cancelled() const { return m_job && m_job->cancelled(); }
    // Drops the hold without waiting; the job still runs to its end on the pool.
    void reset() { m_job.reset(); }
    JobPtr job() const { return m_job; }

    std::optional<Result<T>> try_take() {
        if (!done()) return std::nullopt;
        std::optional<Result<T>> result = m_job->take();
        m_job.reset();
        return result;
    }

private:
    std::shared_ptr<TypedJob<T>> m_job;
};

inline constexpr size_t kMinPoolThreads = 4;

class JobRunner {
public:
    explicit JobRunner(std::function<void()> wake = {});
    ~JobRunner();
    JobRunner(const JobRunner&) = delete;
    JobRunner& operator=(const JobRunner&) = delete;

    template <typename Work>
    auto start(std::string name, Work work) {
        using R = std::invoke_result_t<Work&, JobContext&>;
        using T = std::remove_cvref_t<decltype(std::declval<R>().value())>;
        static_assert(std::is_same_v<R, Result<T>>, "job work must return Result<T>");
        auto job = std::make_shared<TypedJob<T>>(std::move(name), std::move(work));
        enqueue(job);
        return JobHandle<T>(std::move(job));
    }

    void reap();
    // Jobs not reaped yet (queued, running, or done since the last reap).
    std::vector<JobPtr> jobs() const;
    bool busy() const;
    // Blocks until every started job is done (headless drivers and tests).
    void wait_all();
    size_t threads() const { return m_threads.size(); }

private:
    void enqueue(JobPtr job);
    void work_loop();

    std::vector<JobPtr> m_jobs;  // main thread only
    std::function<void()> m_wake;
    std::mutex m_mutex;
    std::condition_variable m_queued;  // a job was queued, or the pool stops
    std::condition_variable m_finished;
    std::deque<JobPtr> m_queue;
    size_t m_unfinished = 0;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

}  // namespace mlens
