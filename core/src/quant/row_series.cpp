#include "mlens/quant/row_series.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

#include "mlens/util/analysis_memory.h"
#include "mlens/util/parallel_job.h"
#include "util/finite_floats.h"
#include "util/thread_scratch.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// Values read at a time: whole entries up to this many, or pieces of a longer entry.
constexpr uint64_t kReadTarget = 1u << 16;

// The two series of a tensor's values, handed over in ranges from several threads at once, each
// value once: an entry handed over whole in one add() is summed there; the pieces of an entry
// split across calls are summed apart and added together in the order of their places in the
// entry, whichever finished first. take() gives the series once every value was added.
class RowSeriesBuilder {
public:
    // `size` values in rows of `row_length` (0 is taken as 1).
    RowSeriesBuilder(uint64_t size, uint64_t row_length);
    uint64_t entry_values() const { return m_entry_values; }
    uint64_t entries() const { return m_entries; }
    void add(uint64_t first, const float* values, uint64_t count);
    std::vector<ScaleSeries> take();

private:
    struct Sums {
        double squares = 0;
        float absmax = 0;
        uint64_t finite = 0;
        uint64_t seen = 0;  // values added, finite or not
        void merge(const Sums& o);
        // Of n values: value i's square added to lane i % kLanes, the lanes then added in lane
        // order.
        static constexpr uint32_t kLanes = 16;
        static Sums sums_of(const float* v, uint64_t n);
    };
    uint64_t entry_end(uint64_t entry) const;
    void finish(uint64_t entry, const Sums& sums);
    void merge_piece(uint64_t entry, uint64_t whole, uint64_t begin, const Sums& piece);  // under the lock

    uint64_t m_size = 0, m_entry_values = 1, m_entries = 0;
    std::vector<float> m_rms, m_absmax;
    std::mutex m_mutex;
    // An entry seen in part so far: the sums of its pieces from its start up to `next`, in order,
    // and the pieces past a gap, by where each begins (a few: threads take pieces in order).
    struct Partial {
        Sums sums;
        uint64_t next = 0;
        std::map<uint64_t, Sums> waiting;
    };
    std::unordered_map<uint64_t, Partial> m_partial;
};

}  // namespace

// Value i goes to lane i % kLanes; the lanes' sums are added in lane order at the end. Each lane
// is one lane of a vector, so the compiler vectorizes the loop without reordering a sum.
MLENS_VECTOR_LOOP RowSeriesBuilder::Sums RowSeriesBuilder::Sums::sums_of(const float* v, uint64_t n) {
    double squares[kLanes] = {};
    float absmax[kLanes] = {};
    uint64_t finite[kLanes] = {};
    auto take = [&](uint32_t lane, float x) {
        const bool counted = finite_bits(x);
        const float kept = counted ? x : 0.0f;
        squares[lane] += static_cast<double>(kept) * kept;
        absmax[lane] = std::max(absmax[lane], std::fabs(kept));
        finite[lane] += counted;
    };
    uint64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (uint32_t lane = 0; lane < kLanes; ++lane) take(lane, v[i + lane]);
    for (uint32_t lane = 0; i + lane < n; ++lane) take(lane, v[i + lane]);
    Sums sums{0, 0, 0, n};
    for (uint32_t lane = 0; lane < kLanes; ++lane) {
        sums.squares += squares[lane];
        sums.absmax = std::max(sums.absmax, absmax[lane]);
        sums.finite += finite[lane];
    }
    return sums;
}

void RowSeriesBuilder::Sums::merge(const Sums& o) {
    squares += o.squares;
    absmax = std::max(absmax, o.absmax);
    finite += o.finite;
    seen += o.seen;
}

RowSeriesBuilder::RowSeriesBuilder(uint64_t size, uint64_t row_length) : m_size(size) {
    const uint64_t length = std::max<uint64_t>(row_length, 1);
    const uint64_t rows = size / length;
    const uint64_t rows_per_entry = std::max<uint64_t>(1, (rows + kMaxSeriesEntries - 1) / kMaxSeriesEntries);
    m_entries = (rows + rows_per_entry - 1) / rows_per_entry;
    m_entry_values = length * rows_per_entry;
    m_rms.assign(m_entries, 0);
    m_absmax.assign(m_entries, 0);
}

// An entry covers m_entry_values values; the last may hold fewer rows.
uint64_t RowSeriesBuilder::entry_end(uint64_t entry) const { return std::min((entry + 1) * m_entry_values, m_size); }

void RowSeriesBuilder::finish(uint64_t entry, const Sums& sums) {
    m_rms[entry] = sums.finite ? static_cast<float>(std::sqrt(sums.squares / static_cast<double>(sums.finite)))
                               : std::numeric_limits<float>::quiet_NaN();
    m_absmax[entry] = sums.absmax;
}

void RowSeriesBuilder::add(uint64_t first, const float* values, uint64_t count) {
    const uint64_t end = first + count;
    for (uint64_t entry = first / m_entry_values; entry < m_entries && entry * m_entry_values < end; ++entry) {
        const uint64_t begin = std::max(first, entry * m_entry_values), stop = std::min(end, entry_end(entry));
        if (begin >= stop) continue;
        const Sums sums = Sums::sums_of(values + (begin - first), stop - begin);
        const uint64_t whole = entry_end(entry) - entry * m_entry_values;
        // An entry whole in this call has no other writer.
        if (sums.seen == whole) {
            finish(entry, sums);
            continue;
        }
        merge_piece(entry, whole, begin, sums);
    }
}

// Kept out of add(): with the lock and the map inlined there, GCC spilled the loop's running
// maximum to the stack, doubling its time.
void RowSeriesBuilder::merge_piece(uint64_t entry, uint64_t whole, uint64_t begin, const Sums& piece) {
    std::lock_guard lock(m_mutex);
    auto [it, added] = m_partial.try_emplace(entry);
    Partial& partial = it->second;
    if (added) partial.next = entry * m_entry_values;
    partial.waiting.emplace(begin, piece);
    for (auto first = partial.waiting.begin(); first != partial.waiting.end() && first->first == partial.next;
         first = partial.waiting.erase(first)) {
        partial.sums.merge(first->second);
        partial.next += first->second.seen;
    }
    if (partial.sums.seen != whole) return;
    finish(entry, partial.sums);
    m_partial.erase(it);
}

std::vector<ScaleSeries> RowSeriesBuilder::take() {
    return {ScaleSeries{"row_rms", m_entry_values, std::move(m_rms)}, ScaleSeries{"row_absmax", m_entry_values, std::move(m_absmax)}};
}

Result<std::vector<ScaleSeries>> row_series(const TensorView& view, JobContext* job, unsigned threads) {
    RowSeriesBuilder rows(view.size(), view.row_length());
    const uint64_t entries = rows.entries(), entry_values = rows.entry_values();
    auto values_of = [&](uint64_t entry) { return std::min(entry_values, view.size() - entry * entry_values); };
    const uint64_t piece = view.chunk_length(kReadTarget);
    Status run = ok_status();
    if (entry_values <= piece) {
        // Whole entries per task.
        const uint64_t per_task = piece / entry_values, tasks = (entries + per_task - 1) / per_task;
        run = parallel_job(tasks, threads, job, [&](uint64_t task) -> Status {
            std::vector<float>& values = thread_scratch<std::vector<float>>([] {});
            const uint64_t first = task * per_task, end = std::min(entries, first + per_task);
            values.resize(std::min(view.size() - first * entry_values, (end - first) * entry_values));
            if (Status s = view.read(first * entry_values, values.size(), values.data()); !s) return s;
            rows.add(first * entry_values, values.data(), values.size());
            return ok_status();
        });
    } else {
        // Pieces of an entry per task, added to the entry's sums as they finish.
        const uint64_t pieces = (entry_values + piece - 1) / piece;
        run = parallel_job(entries * pieces, threads, job, [&](uint64_t task) -> Status {
            std::vector<float>& values = thread_scratch<std::vector<float>>([] {});
            const uint64_t entry = task / pieces, at = task % pieces * piece;
            if (at >= values_of(entry)) return ok_status();
            values.resize(std::min(piece, values_of(entry) - at));
            if (Status s = view.read(entry * entry_values + at, values.size(), values.data()); !s) return s;
            rows.add(entry * entry_values + at, values.data(), values.size());
            return ok_status();
        });
    }
    if (!run) return run.error();
    return rows.take();
}

}  // namespace mlens
