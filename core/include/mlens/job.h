// JobContext: how a long core operation reports progress and learns it was cancelled.
//
// Contract: core functions that may run for long take a JobContext* (nullptr = not observed, not
// cancellable). They call report() now and then with a fraction in [0,1] and stop early,
// returning an Error with code ErrorCode::E_CANCELLED, once cancelled() is true. The object is shared
// between the worker and the observer thread; all members are atomics.
#pragma once

#include <atomic>

namespace mlens {

class JobContext {
public:
    void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
    bool cancelled() const { return m_cancelled.load(std::memory_order_relaxed); }
    void report(double fraction) { m_progress.store(fraction, std::memory_order_relaxed); }
    double progress() const { return m_progress.load(std::memory_order_relaxed); }

private:
    std::atomic<bool> m_cancelled{false};
    std::atomic<double> m_progress{0.0};
};

inline bool job_cancelled(const JobContext* job) { return job && job->cancelled(); }
inline void job_report(JobContext* job, double fraction) {
    if (job) job->report(fraction);
}

}  // namespace mlens
