#include "mlens/analysis/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>

#include "mlens/util/parallel_job.h"

namespace mlens {

namespace {

struct Sums {
    uint64_t count = 0, nonfinite = 0;
    double err2 = 0, a2 = 0, b2 = 0, ab = 0, abs_err = 0, max_abs = 0;
    std::vector<RowError> rows;
    std::vector<BlockError> blocks;
};

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
    uint64_t chunk = std::max<uint64_t>(unit, (1u << 20) / unit * unit);
    uint64_t n_chunks = (a.size() + chunk - 1) / chunk;
    const uint64_t block = block_length > 1 && row_length % block_length == 0 ? block_length : 0;
    Sums total;
    std::mutex m;
    Status run = parallel_job(n_chunks, threads, job, [&](uint64_t c) -> Status {
        uint64_t first = c * chunk, count = std::min(chunk, a.size() - first);
        std::vector<float> va(count), vb(count);
        if (Status s = a.read(first, count, va.data()); !s) return s;
        if (Status s = b.read(first, count, vb.data()); !s) return s;
        Sums local;
        // Rows, and within them blocks (a block never spans two rows: block divides row_length).
        const uint64_t span = block ? block : row_length;
        for (uint64_t r = 0; r * row_length < count; ++r) {
            double row_err2 = 0, row_max = 0;
            uint64_t row_n = 0;
            const uint64_t row_end = std::min(count, (r + 1) * row_length);
            for (uint64_t start = r * row_length; start < row_end; start += span) {
                double span_err2 = 0, span_max = 0;
                uint64_t span_n = 0;
                for (uint64_t i = start; i < std::min(row_end, start + span); ++i) {
                    double x = va[i], y = vb[i];
                    if (!std::isfinite(x) || !std::isfinite(y)) { ++local.nonfinite; continue; }
                    double d = x - y, ad = std::fabs(d);
                    span_err2 += d * d;
                    span_max = std::max(span_max, ad);
                    local.a2 += x * x; local.b2 += y * y; local.ab += x * y; local.abs_err += ad;
                    ++span_n;
                }
                if (block)
                    local.blocks.push_back({(first + start) / block, (first / row_length) + r, start - r * row_length,
                                            span_n ? std::sqrt(span_err2 / span_n) : 0.0, span_max});
                row_err2 += span_err2;
                row_max = std::max(row_max, span_max);
                row_n += span_n;
            }
            local.err2 += row_err2;
            local.max_abs = std::max(local.max_abs, row_max);
            local.count += row_n;
            local.rows.push_back({(first / row_length) + r, row_n ? std::sqrt(row_err2 / row_n) : 0.0, row_max});
        }
        keep_worst(local.rows, keep_rows);
        keep_worst(local.blocks, keep_rows);
        std::lock_guard lock(m);
        total.count += local.count; total.nonfinite += local.nonfinite;
        total.err2 += local.err2; total.a2 += local.a2; total.b2 += local.b2; total.ab += local.ab;
        total.abs_err += local.abs_err; total.max_abs = std::max(total.max_abs, local.max_abs);
        total.rows.insert(total.rows.end(), local.rows.begin(), local.rows.end());
        keep_worst(total.rows, keep_rows);
        total.blocks.insert(total.blocks.end(), local.blocks.begin(), local.blocks.end());
        keep_worst(total.blocks, keep_rows);
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
