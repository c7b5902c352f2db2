#include "mlens/analysis/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>

#include "mlens/util/parallel_job.h"
#include "util/finite_floats.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

// Values compared per chunk (whole rows permitting): both sides' values stay in L2 between the
// loops over them.
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

struct Sums {
    uint64_t count = 0, nonfinite = 0;
    double err2 = 0, a2 = 0, b2 = 0, ab = 0, abs_err = 0, max_abs = 0;
    std::vector<RowError> rows;
    std::vector<BlockError> blocks;

    // Zero sums and no entries, keeping the entries' memory.
    void reset() {
        count = nonfinite = 0;
        err2 = a2 = b2 = ab = abs_err = max_abs = 0;
        rows.clear();
        blocks.clear();
    }
    // Adds another chunk's sums and keeps the `keep` worst rows and blocks of both.
    void merge(const Sums& o, size_t keep) {
        count += o.count; nonfinite += o.nonfinite;
        err2 += o.err2; a2 += o.a2; b2 += o.b2; ab += o.ab; abs_err += o.abs_err;
        max_abs = std::max(max_abs, o.max_abs);
        rows.insert(rows.end(), o.rows.begin(), o.rows.end());
        keep_worst(rows, keep);
        blocks.insert(blocks.end(), o.blocks.begin(), o.blocks.end());
        keep_worst(blocks, keep);
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
    out.a2 += a2; out.b2 += b2; out.ab += ab; out.abs_err += abs_err;
    out.nonfinite += bad;
}

// Squared error, largest |a-b| and count of the finite pairs of one span (a block or a row).
struct SpanError {
    double err2 = 0, max_abs = 0;
    uint64_t n = 0;
};

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

// Adds the comparison of one chunk (whole rows starting at element `first`) to `out`: its sums,
// one RowError per row and, when `block` > 1, one BlockError per block.
void compare_chunk(const float* a, const float* b, uint64_t first, uint64_t count, uint64_t row_length, uint64_t block,
                   Sums& out) {
    const bool masked = !all_finite(a, count) || !all_finite(b, count);
    if (masked) add_pair_sums<true>(a, b, count, out);
    else add_pair_sums<false>(a, b, count, out);
    // Rows, and within them blocks (a block never spans two rows: block divides row_length).
    const uint64_t span = block ? block : row_length;
    thread_local std::vector<SpanError> spans;
    spans.resize((row_length + span - 1) / span);
    for (uint64_t r = 0; r * row_length < count; ++r) {
        const uint64_t start = r * row_length, length = std::min(count - start, row_length);
        if (masked) span_errors<true>(a + start, b + start, length, span, spans.data());
        else span_errors<false>(a + start, b + start, length, span, spans.data());
        SpanError row;
        for (uint64_t k = 0; k * span < length; ++k) {
            const SpanError& e = spans[k];
            if (block)
                out.blocks.push_back({(first + start) / block + k, first / row_length + r, k * span,
                                      e.n ? std::sqrt(e.err2 / static_cast<double>(e.n)) : 0.0, e.max_abs});
            row.err2 += e.err2;
            row.max_abs = std::max(row.max_abs, e.max_abs);
            row.n += e.n;
        }
        out.err2 += row.err2;
        out.max_abs = std::max(out.max_abs, row.max_abs);
        out.count += row.n;
        out.rows.push_back({first / row_length + r, row.n ? std::sqrt(row.err2 / static_cast<double>(row.n)) : 0.0, row.max_abs});
    }
}

}  // namespace

uint64_t comparison_block_length(uint64_t reference_block, uint64_t candidate_block) {
    return candidate_block > 1 ? candidate_block : reference_block;
}

Result<TensorComparison> compare_sources(const FloatSource& a, const FloatSource& b, uint64_t row_length,
                                         size_t keep_rows, JobContext* job, unsigned threads, double progress_from,
                                         double progress_to, uint64_t block_length) {
    if (a.size() != b.size())
        return Error{"E_SHAPE", "", std::nullopt, "element counts differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size())};
    if (row_length == 0) row_length = 1;
    // Chunks hold whole rows and whole blocks of both sides.
    uint64_t unit = std::lcm(std::lcm(a.granularity(), b.granularity()), row_length);
    uint64_t chunk = std::max<uint64_t>(unit, kChunkTarget / unit * unit);
    uint64_t n_chunks = (a.size() + chunk - 1) / chunk;
    const uint64_t block = block_length > 1 && row_length % block_length == 0 ? block_length : 0;
    Sums total;
    std::mutex m;
    Status run = parallel_job(n_chunks, threads, job, [&](uint64_t c) -> Status {
        const uint64_t first = c * chunk, count = std::min(chunk, a.size() - first);
        // Per-thread buffers: chunk after chunk reuses their pages.
        thread_local std::vector<float> va, vb;
        thread_local Sums local;
        va.resize(count);
        vb.resize(count);
        if (Status s = a.read(first, count, va.data()); !s) return s;
        if (Status s = b.read(first, count, vb.data()); !s) return s;
        local.reset();
        compare_chunk(va.data(), vb.data(), first, count, row_length, block, local);
        keep_worst(local.rows, keep_rows);
        keep_worst(local.blocks, keep_rows);
        std::lock_guard lock(m);
        total.merge(local, keep_rows);
        return ok_status();
    }, progress_from, progress_to);
    if (!run) return run.error();

    TensorComparison r;
    r.count = total.count;
    r.nonfinite = total.nonfinite;
    r.worst_rows = std::move(total.rows);
    r.block_length = block;
    r.worst_blocks = std::move(total.blocks);
    if (total.count == 0) return r;
    const double n = static_cast<double>(total.count);
    r.rmse = std::sqrt(total.err2 / n);
    r.mean_abs = total.abs_err / n;
    r.max_abs = total.max_abs;
    r.nmse = total.a2 > 0 ? total.err2 / total.a2 : (total.err2 > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    r.cosine = (total.a2 > 0 && total.b2 > 0) ? total.ab / std::sqrt(total.a2 * total.b2) : (total.a2 == total.b2 ? 1.0 : 0.0);
    r.snr_db = total.err2 > 0 ? 10.0 * std::log10(total.a2 / total.err2) : std::numeric_limits<double>::infinity();
    return r;
}

}  // namespace mlens
