#include "mlens/quant/row_series.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "mlens/util/parallel_job.h"

namespace mlens {

namespace {

// Values read at a time: whole rows up to this many, or pieces of a longer row.
constexpr uint64_t kReadTarget = 1u << 16;

struct RowSums {
    double squares = 0;
    float absmax = 0;
    uint64_t finite = 0;

    void add(const float* v, uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
            if (!std::isfinite(v[i])) continue;
            squares += static_cast<double>(v[i]) * v[i];
            absmax = std::max(absmax, std::fabs(v[i]));
            ++finite;
        }
    }
};

}  // namespace

Result<std::vector<ScaleSeries>> row_series(const TensorView& view, JobContext* job, unsigned threads) {
    const uint64_t length = std::max<uint64_t>(view.row_length(), 1);
    const uint64_t rows = view.size() / length;
    ScaleSeries rms{"row_rms", length, std::vector<float>(rows)};
    ScaleSeries absmax{"row_absmax", length, std::vector<float>(rows)};
    const uint64_t piece = view.chunk_length(kReadTarget);
    const uint64_t rows_per_task = std::max<uint64_t>(1, piece / length);
    const uint64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
    Status run = parallel_job(tasks, threads, job, [&](uint64_t task) -> Status {
        thread_local std::vector<float> values;
        const uint64_t first_row = task * rows_per_task, end_row = std::min(rows, first_row + rows_per_task);
        std::vector<RowSums> sums(end_row - first_row);
        if (length <= piece) {
            values.resize((end_row - first_row) * length);
            if (Status s = view.read(first_row * length, values.size(), values.data()); !s) return s;
            for (uint64_t r = 0; r < sums.size(); ++r) sums[r].add(values.data() + r * length, length);
        } else {
            for (uint64_t at = 0; at < length; at += piece) {
                values.resize(std::min(piece, length - at));
                if (Status s = view.read(first_row * length + at, values.size(), values.data()); !s) return s;
                sums[0].add(values.data(), values.size());
            }
        }
        for (uint64_t r = 0; r < sums.size(); ++r) {
            const RowSums& s = sums[r];
            rms.values[first_row + r] = s.finite ? static_cast<float>(std::sqrt(s.squares / static_cast<double>(s.finite)))
                                                 : std::numeric_limits<float>::quiet_NaN();
            absmax.values[first_row + r] = s.absmax;
        }
        return ok_status();
    });
    if (!run) return run.error();
    return std::vector<ScaleSeries>{std::move(rms), std::move(absmax)};
}

}  // namespace mlens
