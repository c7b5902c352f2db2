#include "mlens/infer/distribution.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mlens {

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
    float max_logit = -std::numeric_limits<float>::infinity();
    for (float v : logits)
        if (std::isfinite(v)) max_logit = std::max(max_logit, v);
    if (!std::isfinite(max_logit)) return -std::numeric_limits<double>::infinity();
    double sum = 0.0;
    for (float v : logits)
        if (std::isfinite(v)) sum += static_cast<double>(std::exp(v - max_logit));
    return std::log(sum) + static_cast<double>(max_logit);
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
    if (n * 16 < logits.size()) {
        // One pass: `best` stays sorted by `before`; a candidate enters when it beats the last.
        std::vector<int32_t> best;
        best.reserve(n + 1);
        for (size_t i = 0; i < logits.size(); ++i) {
            const auto id = static_cast<int32_t>(i);
            if (best.size() == n && !before(id, best.back())) continue;
            best.insert(std::upper_bound(best.begin(), best.end(), id, before), id);
            if (best.size() > n) best.pop_back();
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
