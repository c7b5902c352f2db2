// How much a piece of work adds to this process's resident memory at its peak, for tests of the
// analysis memory bound; and the work run with a job that is cancelled once it makes progress.
#pragma once

#include <cstdint>
#include <functional>

#include "mlens/job.h"

namespace mlens::test {

// Runs `work` and returns how far the resident set rose above where it was when the work
// started (Linux: the peak is restarted through /proc/self/clear_refs).
uint64_t peak_growth_bytes(const std::function<void()>& work);

// Runs `work` with a job that another thread cancels shortly after the work first reports
// progress; returns peak_growth_bytes of the run.
uint64_t run_cancelled_after_progress(const std::function<void(JobContext*)>& work);

}  // namespace mlens::test
