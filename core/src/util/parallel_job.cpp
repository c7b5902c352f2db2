#include "mlens/util/parallel_job.h"

#include <atomic>
#include <mutex>
#include <optional>

#include "mlens/util/parallel.h"

namespace mlens {

Status parallel_job(uint64_t count, unsigned threads, JobContext* job, const std::function<Status(uint64_t)>& fn, double progress_from,
                    double progress_to) {
    std::atomic<uint64_t> done{0};
    std::mutex error_mutex;
    std::optional<Error> error;
    parallel_for(count, threads, [&](uint64_t task) {
        if (job_cancelled(job)) return false;
        if (Status s = fn(task); !s) {
            std::lock_guard lock(error_mutex);
            if (!error) error = s.error();
            return false;
        }
        const double share = static_cast<double>(++done) / static_cast<double>(count);
        job_report(job, progress_from + (progress_to - progress_from) * share);
        return true;
    });
    if (error) return *error;
    if (job_cancelled(job)) return cancelled_error();
    return ok_status();
}

}  // namespace mlens
