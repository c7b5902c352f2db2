// How a view that shows one job's result takes it when the job ends.
//
// Contract: take_finished returns false while the job runs (or when there is none) and changes
// nothing. When it has ended it returns true: `value` holds the result and `status` is cleared,
// or, when the job ended without one, `value` is empty and `status` says why — "Cancelled." for
// E_CANCELLED, else the error, escaped for display.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "job_runner.h"
#include "mlens/text/escape.h"

namespace mlens {

template <typename T>
bool take_finished(JobHandle<T>& job, std::optional<T>& value, std::string& status) {
    std::optional<Result<T>> taken = job.try_take();
    if (!taken) return false;
    if (*taken) {
        value.emplace(std::move(*taken).value());
        status.clear();
    } else {
        value.reset();
        const Error& e = taken->error();
        status = e.code == ErrorCode::E_CANCELLED ? "Cancelled." : escape_for_display(e.to_string(), 300);
    }
    return true;
}

}  // namespace mlens
