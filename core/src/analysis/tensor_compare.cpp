#include "mlens/analysis/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>

#include "mlens/util/analysis_memory.h"
#include "mlens/util/parallel_job.h"
#include "util/finite_floats.h"
#include "util/thread_scratch.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// Values compared per chunk: both sides' values stay in L2 between the loops over them.
constexpr uint64_t kChunkTarget = 1u << 16;

uint64_t index_of(const RowError& r) { return r.row; }
uint64_t index_of(const BlockError& b) { return b.block; }

// Keeps the `keep` entries with the largest RMSE, largest first, lower index first on ties.
template <typename Entry>
void keep_worst(std::vector<Entry>& entries, size_t keep) {
    auto worse = [](const Entry& x, const Entry& y) { return x.rmse != y.rmse ? x.rmse > y.rmse : index_of(x) < index_of(y); };
    if (entries.size() > keep) {
        std::nth_element(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(keep), entries.end(), worse);
        entries.resize(keep);
    }
    std::sort(entries.begin(), entries.end(), worse);
}

// Squared error, largest |a-b| and count of the finite pairs of one span (a block or a row).
struct SpanError {
    double err2 = 0, max_abs = 0;
    uint64_t n = 0;
};

// The part of a row that one chunk holds, when the row spans several chunks.
struct RowPiece {
    uint64_t row = 0;
    uint64_t values = 0;  // all values of the piece, finite or not
    SpanError error;
};

// The sums over the pairs of one chunk or of the chunks folded so far: the error sums, and how
// many pairs were not finite, the sum of |a-b| and its largest value.
struct PairSums : ErrorSums {
    uint64_t nonfinite = 0;
    double abs_err = 0, max_abs = 0;

    void add(const PairSums& o) {
        ErrorSums::add(o);
        nonfinite += o.nonfinite;
        abs_err += o.abs_err;
        max_abs = std::max(max_abs, o.max_abs);
    }
};

struct Sums : PairSums {
    std::vector<RowError> rows;
    std::vector<BlockError> blocks;
    std::vector<RowPiece> pieces;  // a chunk's: at most its first and last row

    // Zero sums and no entries, keeping the entries' memory.
    void reset() {
        static_cast<PairSums&>(*this) = PairSums{};
        rows.clear();
        blocks.clear();
        pieces.clear();
    }
};

// The comparison of the chunks merged so far. A row that spans chunks is pieced together here
// until all its values are in; the chunks in flight bound how many rows are open at once.
// Chunks finish in any order, but they are folded in chunk order (a chunk that finishes early
// waits in `waiting`), so every sum is added in the same order whatever the threads did and the
// figures are the same to the last digit from run to run.
struct Totals {
    Sums sums;
    std::map<uint64_t, RowPiece> open_rows;
    std::map<uint64_t, Sums> waiting;
    uint64_t next_chunk = 0;

    // Takes chunk `chunk`'s sums and folds every chunk that is now next in order, keeping the
    // `keep` worst rows and blocks; `row_values(r)` is the number of values of row r.
    template <typename RowValues>
    void merge(uint64_t chunk, Sums&& o, size_t keep, const RowValues& row_values) {
        waiting.emplace(chunk, std::move(o));
        for (auto next = waiting.begin(); next != waiting.end() && next->first == next_chunk; next = waiting.begin()) {
            fold(next->second, keep, row_values);
            waiting.erase(next);
            ++next_chunk;
        }
    }

    template <typename RowValues>
    void fold(const Sums& o, size_t keep, const RowValues& row_values) {
        sums.add(o);
        sums.rows.insert(sums.rows.end(), o.rows.begin(), o.rows.end());
        for (const RowPiece& p : o.pieces) {
            RowPiece& row = open_rows[p.row];
            row.row = p.row;
            row.values += p.values;
            row.error.err2 += p.error.err2;
            row.error.max_abs = std::max(row.error.max_abs, p.error.max_abs);
            row.error.n += p.error.n;
            if (row.values < row_values(p.row)) continue;
            sums.rows.push_back(row_error(row.row, row.error));
            open_rows.erase(p.row);
        }
        keep_worst(sums.rows, keep);
        sums.blocks.insert(sums.blocks.end(), o.blocks.begin(), o.blocks.end());
        keep_worst(sums.blocks, keep);
    }

    static RowError row_error(uint64_t row, const SpanError& e) {
        return {row, e.n ? std::sqrt(e.err2 / static_cast<double>(e.n)) : 0.0, e.max_abs};
    }
};

// The chunk-wide sums of the finite pairs of a and b (n values each): a², b², a·b and |a-b|,
// added to `out`, and how many pairs have a NaN or an infinity. Vector loops: `omp simd` splits
// the sums across lanes; a pair that is not finite adds zeros.
template <bool kMasked>
MLENS_VECTOR_LOOP void add_pair_sums(const float* a, const float* b, uint64_t n, Sums& out) {
    double a2 = 0, b2 = 0, ab = 0, abs_err = 0;
    uint64_t bad = 0;
#pragma omp simd reduction(+ : a2, b2, ab, abs_err, bad)
    for (uint64_t i = 0; i < n; ++i) {
        const bool ok = !kMasked || (finite_bits(a[i]) && finite_bits(b[i]));
        const double x = ok ? a[i] : 0.0, y = ok ? b[i] : 0.0;
        a2 += x * x;
        b2 += y * y;
        ab += x * y;
        abs_err += std::fabs(x - y);
        bad += !ok;
    }
    out.a2 += a2;
    out.b2 += b2;
    out.ab += ab;
    out.abs_err += abs_err;
    out.nonfinite += bad;
}

// The SpanError of each run of `span` values of a and b (n values; the last run may be shorter),
// into out[0 .. ceil(n / span)). One call per row, so that short blocks cost no call each.
template <bool kMasked>
MLENS_VECTOR_LOOP void span_errors(const float* a, const float* b, uint64_t n, uint64_t span, SpanError* out) {
    for (uint64_t start = 0, k = 0; start < n; start += span, ++k) {
        const uint64_t end = std::min(n, start + span);
        double err2 = 0, max_abs = 0;
        uint64_t count = 0;
#pragma omp simd reduction(+ : err2, count) reduction(max : max_abs)
        for (uint64_t i = start; i < end; ++i) {
            const bool ok = !kMasked || (finite_bits(a[i]) && finite_bits(b[i]));
            const double d = ok ? static_cast<double>(a[i]) - static_cast<double>(b[i]) : 0.0;
            err2 += d * d;
            max_abs = std::max(max_abs, std::fabs(d));
            count += ok;
        }
        out[k] = {err2, max_abs, count};
    }
}

// Adds the comparison of one chunk (values [first, first + count) of sources of `size` values) to
// `out`: its sums, one RowError per row it holds whole, one RowPiece per row it holds part of,
// and, when `block` > 1, one BlockError per block (a chunk holds whole blocks, and a block never
// spans two rows: block divides row_length).
void compare_chunk(const float* a, const float* b, uint64_t first, uint64_t count, uint64_t size, uint64_t row_length, uint64_t block,
                   Sums& out) {
    const bool masked = !all_finite(a, count) || !all_finite(b, count);
    if (masked)
        add_pair_sums<true>(a, b, count, out);
    else
        add_pair_sums<false>(a, b, count, out);
    std::vector<SpanError>& spans = thread_scratch<std::vector<SpanError>>([] {});
    for (uint64_t at = 0; at < count;) {
        // The part of one row in this chunk: [at, end).
        const uint64_t row = (first + at) / row_length, row_start = row * row_length;
        const uint64_t row_end = row_start + std::min(row_length, size - row_start);
        const uint64_t end = std::min(count, row_end - first), length = end - at;
        const uint64_t span = block ? block : length;
        spans.resize((length + span - 1) / span);
        if (masked)
            span_errors<true>(a + at, b + at, length, span, spans.data());
        else
            span_errors<false>(a + at, b + at, length, span, spans.data());
        SpanError whole;
        for (uint64_t k = 0; k < spans.size(); ++k) {
            const SpanError& e = spans[k];
            if (block)
                out.blocks.push_back({(first + at) / block + k, row, first + at - row_start + k * span,
                                      e.n ? std::sqrt(e.err2 / static_cast<double>(e.n)) : 0.0, e.max_abs});
            whole.err2 += e.err2;
            whole.max_abs = std::max(whole.max_abs, e.max_abs);
            whole.n += e.n;
        }
        out.err2 += whole.err2;
        out.max_abs = std::max(out.max_abs, whole.max_abs);
        out.count += whole.n;
        if (length == row_end - row_start)
            out.rows.push_back(Totals::row_error(row, whole));
        else
            out.pieces.push_back({row, length, whole});
        at = end;
    }
}

}  // namespace

uint64_t comparison_block_length(uint64_t reference_block, uint64_t candidate_block) {
    return candidate_block > 1 ? candidate_block : reference_block;
}

Result<TensorComparison> compare_sources(const FloatSource& a, const FloatSource& b, uint64_t row_length, size_t keep_rows, JobContext* job,
                                         unsigned threads, double progress_from, double progress_to, uint64_t block_length) {
    if (a.size() != b.size())
        return Error{ErrorCode::E_SHAPE, "", std::nullopt,
                     "element counts differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size())};
    if (row_length == 0) row_length = 1;
    const uint64_t block = block_length > 1 && row_length % block_length == 0 ? block_length : 0;
    // Chunks hold whole blocks of both sides and whole comparison blocks; rows may span chunks.
    const uint64_t unit = std::lcm(std::lcm(a.granularity(), b.granularity()), std::max<uint64_t>(block, 1));
    if (unit == 0 || unit > kMaxReadUnit)
        return Error{ErrorCode::E_LIMIT, "", std::nullopt,
                     "values are read in units of " + std::to_string(unit) + ", more than the " + std::to_string(kMaxReadUnit) +
                         " an analysis reads at once"};
    const uint64_t chunk = std::max<uint64_t>(unit, kChunkTarget / unit * unit);
    const uint64_t size = a.size(), n_chunks = (size + chunk - 1) / chunk;
    const auto row_values = [&](uint64_t row) { return std::min(row_length, size - row * row_length); };
    Totals totals;
    std::mutex m;
    Status run = parallel_job(
        n_chunks, threads, job,
        [&](uint64_t c) -> Status {
            const uint64_t first = c * chunk, count = std::min(chunk, size - first);
            // Per-thread buffers: chunk after chunk reuses their pages.
            std::vector<float>& va = thread_scratch<std::vector<float>>([] {});
            std::vector<float>& vb = thread_scratch<std::vector<float>>([] {});
            Sums& local = thread_scratch<Sums>([] {});
            va.resize(count);
            vb.resize(count);
            if (Status s = a.read(first, count, va.data()); !s) return s;
            if (Status s = b.read(first, count, vb.data()); !s) return s;
            local.reset();
            compare_chunk(va.data(), vb.data(), first, count, size, row_length, block, local);
            keep_worst(local.rows, keep_rows);
            keep_worst(local.blocks, keep_rows);
            std::lock_guard lock(m);
            totals.merge(c, std::move(local), keep_rows, row_values);
            return ok_status();
        },
        progress_from, progress_to);
    if (!run) return run.error();

    Sums& total = totals.sums;
    TensorComparison r;
    r.count = total.count;
    r.nonfinite = total.nonfinite;
    r.worst_rows = std::move(total.rows);
    r.block_length = block;
    r.worst_blocks = std::move(total.blocks);
    r.sums = total;
    if (total.count == 0) return r;
    r.mean_abs = total.abs_err / static_cast<double>(total.count);
    r.max_abs = total.max_abs;
    const ErrorFigures f = error_figures(r.sums);
    r.rmse = f.rmse;
    r.nmse = f.nmse;
    r.cosine = f.cosine;
    r.snr_db = f.snr_db;
    return r;
}

ErrorFigures error_figures(const ErrorSums& s) {
    ErrorFigures f;
    if (s.count == 0) return f;
    f.rmse = std::sqrt(s.err2 / static_cast<double>(s.count));
    f.nmse = s.a2 > 0 ? s.err2 / s.a2 : (s.err2 > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    f.cosine = (s.a2 > 0 && s.b2 > 0) ? s.ab / std::sqrt(s.a2 * s.b2) : (s.a2 == s.b2 ? 1.0 : 0.0);
    f.snr_db = s.err2 > 0 ? 10.0 * std::log10(s.a2 / s.err2) : std::numeric_limits<double>::infinity();
    return f;
}

}  // namespace mlens
