#include "mlens/infer/distribution.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "util/finite_floats.h"
#include "util/vector_loop.h"

namespace mlens {

namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kNegativeInfinity = -kInfinity;

// The largest of n logits, NaN counted as -inf (the order top_k ranks by).
MLENS_VECTOR_LOOP float max_ranked(const float* v, size_t n) {
    float m = kNegativeInfinity;
#pragma omp simd reduction(max : m)
    for (size_t i = 0; i < n; ++i) m = v[i] > m ? v[i] : m;
    return m;
}

// The largest finite logit; -inf when none is finite.
MLENS_VECTOR_LOOP float max_finite(const float* v, size_t n) {
    float m = kNegativeInfinity;
#pragma omp simd reduction(max : m)
    for (size_t i = 0; i < n; ++i) m = v[i] > m && v[i] < kInfinity ? v[i] : m;
    return m;
}

// e^x for -87 <= x <= 0, within 2 ulp: e^r 2^k with k = round(x / ln 2) (x <= 0, so truncating
// x / ln 2 - 0.5 rounds), r = x - k ln 2 (ln 2 split in two parts so that r is exact enough) and
// e^r from its Taylor series to r^6 (|r| <= ln 2 / 2: truncation below 2e-7). Plain arithmetic,
// so that loops over it vectorize.
inline float exp_nonpositive(float x) {
    const int32_t k = static_cast<int32_t>(x * 1.44269504f - 0.5f);
    const auto kf = static_cast<float>(k);
    const float r = (x - kf * 0.693359375f) + kf * 2.12194440e-4f;
    const float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
    return p * std::bit_cast<float>((k + 127) << 23);
}

// Σ e^(v - shift) over the finite v (all <= shift), in double; terms below e^-87 count as e^-87.
MLENS_VECTOR_LOOP double sum_exp_below(const float* v, size_t n, float shift) {
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (size_t i = 0; i < n; ++i) {
        const float weight = finite_bits(v[i]) ? 1.0f : 0.0f;
        float x = v[i] - shift;  // NaN for NaN or infinite v, whose weight is 0
        x = x > -87.0f ? x : -87.0f;
        x = x < 0.0f ? x : 0.0f;
        sum += static_cast<double>(weight * exp_nonpositive(x));
    }
    return sum;
}

}  // namespace

std::vector<double> log_softmax(std::span<const float> logits) {
    std::vector<double> out(logits.size(), -std::numeric_limits<double>::infinity());
    double max_logit = -std::numeric_limits<double>::infinity();
    for (float v : logits)
        if (std::isfinite(v)) max_logit = std::max(max_logit, static_cast<double>(v));
    if (!std::isfinite(max_logit)) return out;
    double sum = 0.0;
    for (float v : logits)
        if (std::isfinite(v)) sum += std::exp(static_cast<double>(v) - max_logit);
    const double log_sum = std::log(sum) + max_logit;
    for (size_t i = 0; i < logits.size(); ++i)
        if (std::isfinite(logits[i])) out[i] = static_cast<double>(logits[i]) - log_sum;
    return out;
}

double log_sum_exp(std::span<const float> logits) {
    const float max_logit = max_finite(logits.data(), logits.size());
    if (!std::isfinite(max_logit)) return -std::numeric_limits<double>::infinity();
    return std::log(sum_exp_below(logits.data(), logits.size(), max_logit)) + static_cast<double>(max_logit);
}

std::vector<int32_t> top_k(std::span<const float> logits, int k) {
    const size_t n = std::min(logits.size(), static_cast<size_t>(std::max(k, 0)));
    auto value = [&](int32_t id) {
        float v = logits[static_cast<size_t>(id)];
        return std::isnan(v) ? -std::numeric_limits<float>::infinity() : v;
    };
    auto before = [&](int32_t a, int32_t b) {
        const float la = value(a), lb = value(b);
        return la != lb ? la > lb : a < b;
    };
    if (n == 0) return {};
    if (n * 16 < logits.size()) {
        // One pass: `best` stays sorted by `before`; a candidate enters when it beats the last.
        // Once `best` is full, a block whose largest logit does not exceed the last one's is
        // skipped: its ids are all higher, so even a tie would not enter.
        constexpr size_t kBlock = 256;
        std::vector<int32_t> best;
        best.reserve(n + 1);
        for (size_t start = 0; start < logits.size(); start += kBlock) {
            const size_t end = std::min(logits.size(), start + kBlock);
            if (best.size() == n && max_ranked(logits.data() + start, end - start) <= value(best.back())) continue;
            for (size_t i = start; i < end; ++i) {
                const auto id = static_cast<int32_t>(i);
                if (best.size() == n && !before(id, best.back())) continue;
                best.insert(std::upper_bound(best.begin(), best.end(), id, before), id);
                if (best.size() > n) best.pop_back();
            }
        }
        return best;
    }
    std::vector<int32_t> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(n), ids.end(), before);
    ids.resize(n);
    return ids;
}

int32_t argmax(std::span<const float> logits) {
    auto best = top_k(logits, 1);
    return best.empty() ? -1 : best[0];
}

double kl_divergence(std::span<const double> log_p, std::span<const double> log_q) {
    double sum = 0.0;
    const size_t n = std::min(log_p.size(), log_q.size());
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(log_p[i])) continue;
        if (!std::isfinite(log_q[i])) return std::numeric_limits<double>::infinity();
        sum += std::exp(log_p[i]) * (log_p[i] - log_q[i]);
    }
    // Rounding can leave a tiny negative sum for identical distributions; KL is never negative.
    return std::max(sum, 0.0);
}

int32_t TokenSampler::sample(std::span<const float> logits) {
    if (m_params.temperature <= 0.0f || logits.size() <= 1) return argmax(logits);
    const int k = m_params.top_k > 0 ? m_params.top_k : static_cast<int>(logits.size());
    std::vector<int32_t> ids = top_k(logits, k);
    std::vector<float> scaled(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) scaled[i] = logits[static_cast<size_t>(ids[i])] / m_params.temperature;
    std::vector<double> logp = log_softmax(scaled);
    size_t keep = ids.size();
    if (m_params.top_p < 1.0f) {
        double cumulative = 0.0;
        for (size_t i = 0; i < ids.size(); ++i) {
            cumulative += std::exp(logp[i]);
            if (cumulative >= m_params.top_p) {
                keep = i + 1;
                break;
            }
        }
    }
    double total = 0.0;
    for (size_t i = 0; i < keep; ++i) total += std::exp(logp[i]);
    // 53 random bits -> uniform in [0, 1), independent of the standard library's distributions.
    const double u = static_cast<double>(m_rng() >> 11) * (1.0 / 9007199254740992.0) * total;
    double acc = 0.0;
    for (size_t i = 0; i < keep; ++i) {
        acc += std::exp(logp[i]);
        if (u < acc) return ids[i];
    }
    return ids[keep - 1];
}

}  // namespace mlens
