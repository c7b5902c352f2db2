#include "mlens/quant/row_series.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "mlens/util/analysis_memory.h"
#include "mlens/util/parallel_job.h"

namespace mlens {

namespace {

// Values read at a time: whole entries up to this many, or pieces of a longer entry.
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
    void merge(const RowSums& o) {
        squares += o.squares;
        absmax = std::max(absmax, o.absmax);
        finite += o.finite;
    }
    float rms() const {
        return finite ? static_cast<float>(std::sqrt(squares / static_cast<double>(finite))) : std::numeric_limits<float>::quiet_NaN();
    }
};

}  // namespace

Result<std::vector<ScaleSeries>> row_series(const TensorView& view, JobContext* job, unsigned threads) {
    const uint64_t length = std::max<uint64_t>(view.row_length(), 1);
    const uint64_t rows = view.size() / length;
    const uint64_t rows_per_entry = std::max<uint64_t>(1, (rows + kMaxSeriesEntries - 1) / kMaxSeriesEntries);
    const uint64_t entries = (rows + rows_per_entry - 1) / rows_per_entry;
    // Values of one entry; the last may hold fewer rows.
    const uint64_t entry_values = length * rows_per_entry;
    auto values_of = [&](uint64_t entry) { return std::min(entry_values, view.size() - entry * entry_values); };
    ScaleSeries rms{"row_rms", entry_values, std::vector<float>(entries)};
    ScaleSeries absmax{"row_absmax", entry_values, std::vector<float>(entries)};
    const uint64_t piece = view.chunk_length(kReadTarget);
    Status run = ok_status();
    if (entry_values <= piece) {
        // Whole entries per task, each written by the task that reads it.
        const uint64_t per_task = piece / entry_values, tasks = (entries + per_task - 1) / per_task;
        run = parallel_job(tasks, threads, job, [&](uint64_t task) -> Status {
            thread_local std::vector<float> values;
            const uint64_t first = task * per_task, end = std::min(entries, first + per_task);
            values.resize(std::min(view.size() - first * entry_values, (end - first) * entry_values));
            if (Status s = view.read(first * entry_values, values.size(), values.data()); !s) return s;
            for (uint64_t e = first; e < end; ++e) {
                RowSums sums;
                sums.add(values.data() + (e - first) * entry_values, values_of(e));
                rms.values[e] = sums.rms();
                absmax.values[e] = sums.absmax;
            }
            return ok_status();
        });
    } else {
        // Pieces of an entry per task, added to the entry's sums as they finish.
        const uint64_t pieces = (entry_values + piece - 1) / piece;
        std::vector<RowSums> sums(entries);
        std::mutex m;
        run = parallel_job(entries * pieces, threads, job, [&](uint64_t task) -> Status {
            thread_local std::vector<float> values;
            const uint64_t entry = task / pieces, at = task % pieces * piece;
            if (at >= values_of(entry)) return ok_status();
            values.resize(std::min(piece, values_of(entry) - at));
            if (Status s = view.read(entry * entry_values + at, values.size(), values.data()); !s) return s;
            RowSums local;
            local.add(values.data(), values.size());
            std::lock_guard lock(m);
            sums[entry].merge(local);
            return ok_status();
        });
        for (uint64_t e = 0; run && e < entries; ++e) {
            rms.values[e] = sums[e].rms();
            absmax.values[e] = sums[e].absmax;
        }
    }
    if (!run) return run.error();
    return std::vector<ScaleSeries>{std::move(rms), std::move(absmax)};
}

}  // namespace mlens
