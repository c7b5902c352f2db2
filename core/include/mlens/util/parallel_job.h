// parallel_job: parallel_for as one cancellable job with an error and progress.
//
// Contract: calls fn(task) for tasks [0, count) on at most `threads` threads (parallel_for's
// rules). The first task whose Status is an error stops the rest and is returned; a job
// cancelled meanwhile gives E_CANCELLED. Each finished task reports progress, spread over
// [progress_from, progress_to] in proportion to the tasks done.
#pragma once

#include <cstdint>
#include <functional>

#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens {

Status parallel_job(uint64_t count, unsigned threads, JobContext* job, const std::function<Status(uint64_t)>& fn,
                    double progress_from = 0.0, double progress_to = 1.0);

}  // namespace mlens
