#include "mlens/infer/kld_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mlens {

namespace {

// Round to nearest through the float mantissa, as llama-perplexity does (valid below 2^22).
int nearest_int(float fval) {
    float val = fval + 12582912.f;
    int i;
    std::memcpy(&i, &val, sizeof(int));
    return (i & 0x007fffff) - 0x00400000;
}

std::pair<double, double> mean_and_uncertainty(double sum, double sum2, uint64_t count) {
    if (count < 1) return {0.0, 0.0};
    const double f = sum / static_cast<double>(count);
    double df = sum2 / static_cast<double>(count) - f * f;
    df = df > 0 && count > 10 ? std::sqrt(df / static_cast<double>(count - 1)) : 0.0;
    return {f, df};
}

double covariance(double suma, double sumb, double sumab, uint64_t count) {
    if (count < 10) return 0.0;
    const double n = static_cast<double>(count);
    double var = sumab / n - (suma / n) * (sumb / n);
    return var / (n - 1);
}

float percentile(const std::vector<float>& values, float fraction) {
    if (fraction <= 0) return values.front();
    if (fraction >= 1) return values.back();
    float p = fraction * static_cast<float>(values.size() - 1);
    const auto ip = static_cast<size_t>(p);
    p -= static_cast<float>(ip);
    return (1 - p) * values[ip] + p * values[std::min(ip + 1, values.size() - 1)];
}

}  // namespace

double plain_token_nll(std::span<const float> logits, int32_t token) {
    float max_logit = logits[0];
    for (size_t i = 1; i < logits.size(); ++i) max_logit = std::max(max_logit, logits[i]);
    double sum_exp = 0.0;
    for (const float l : logits) sum_exp += expf(l - max_logit);
    const float shifted = logits[static_cast<size_t>(token)] - max_logit;
    return -(static_cast<double>(shifted) - std::log(sum_exp));
}

double quantize_base_log_probs(std::span<const float> logits, std::span<uint16_t> row, int32_t token) {
    const size_t n_vocab = logits.size();
    float max_logit = logits[0];
    float min_logit = logits[0];
    for (size_t i = 1; i < n_vocab; ++i) {
        max_logit = std::max(max_logit, logits[i]);
        min_logit = std::min(min_logit, logits[i]);
    }
    min_logit = std::max(min_logit, max_logit - 16);
    double sum_exp = 0.0;
    for (size_t i = 0; i < n_vocab; ++i) sum_exp += expf(logits[i] - max_logit);
    const float log_sum_exp = static_cast<float>(std::log(sum_exp));
    const float min_log_prob = min_logit - max_logit - log_sum_exp;
    const float scale = (max_logit - min_logit) / 65535.f;
    std::memcpy(row.data(), &scale, sizeof(float));
    std::memcpy(row.data() + 2, &min_log_prob, sizeof(float));
    uint16_t* q = row.data() + 4;
    if (scale != 0) {
        const float inv_scale = 1 / scale;
        for (size_t i = 0; i < n_vocab; ++i)
            q[i] = logits[i] > min_logit ? static_cast<uint16_t>(nearest_int(inv_scale * (logits[i] - min_logit))) : 0;
    } else {
        std::fill(q, q + n_vocab, uint16_t{0});
    }
    // The padding value of an odd vocabulary is never read; zero keeps written files deterministic.
    std::fill(q + n_vocab, row.data() + row.size(), uint16_t{0});
    return max_logit + log_sum_exp - logits[static_cast<size_t>(token)];
}

void KldSums::add(const KldSums& o) {
    nll += o.nll;
    nll2 += o.nll2;
    nll_base += o.nll_base;
    nll_base2 += o.nll_base2;
    nll_nll_base += o.nll_nll_base;
    kld += o.kld;
    kld2 += o.kld2;
    p_diff += o.p_diff;
    p_diff2 += o.p_diff2;
    p_diff4 += o.p_diff4;
    max_abs_p_diff = std::max(max_abs_p_diff, o.max_abs_p_diff);
    same_top += o.same_top;
    count += o.count;
}

KldPoint score_position(std::span<const float> logits, std::span<const uint16_t> base_row, int32_t token, KldSums& s) {
    const size_t n_vocab = logits.size();
    float max_logit = logits[0];
    size_t imax = 0;
    for (size_t i = 1; i < n_vocab; ++i) {
        if (logits[i] > max_logit) {
            max_logit = logits[i];
            imax = i;
        }
    }
    double sum_exp = 0.0;
    for (size_t i = 0; i < n_vocab; ++i) sum_exp += expf(logits[i] - max_logit);
    const float log_sum_exp = static_cast<float>(std::log(sum_exp));
    float scale, min_log_prob;
    std::memcpy(&scale, base_row.data(), sizeof(float));
    std::memcpy(&min_log_prob, base_row.data() + 2, sizeof(float));
    const uint16_t* base = base_row.data() + 4;
    const auto t = static_cast<size_t>(token);

    const float nll = max_logit + log_sum_exp - logits[t];
    s.nll += nll;
    s.nll2 += nll * nll;
    const float nll_base = -(scale * base[t] + min_log_prob);
    s.nll_base += nll_base;
    s.nll_base2 += nll_base * nll_base;
    s.nll_nll_base += nll * nll_base;

    max_logit += log_sum_exp;
    double sum = 0;
    size_t imax_base = 0;
    float p_log_base_max = 0;
    for (size_t i = 0; i < n_vocab; ++i) {
        const float p_log_base = scale * base[i] + min_log_prob;
        if (i == 0 || p_log_base > p_log_base_max) {
            p_log_base_max = p_log_base;
            imax_base = i;
        }
        if (p_log_base > -16.f) {
            const float p_base = expf(p_log_base);
            sum += p_base * (p_log_base - logits[i] + max_logit);
        }
    }
    s.kld += sum;
    s.kld2 += sum * sum;
    ++s.count;
    if (imax == imax_base) ++s.same_top;

    const float p_base = expf(-nll_base);
    const float p = expf(-nll);
    const float p_diff = p - p_base;
    s.p_diff += p_diff;
    const double p_diff2 = p_diff * p_diff;
    s.p_diff2 += p_diff2;
    s.p_diff4 += p_diff2 * p_diff2;
    s.max_abs_p_diff = std::max(s.max_abs_p_diff, std::fabs(p_diff));
    return KldPoint{static_cast<float>(sum), p_diff, static_cast<int32_t>(imax_base), static_cast<int32_t>(imax)};
}

KldMoments kld_moments(const KldSums& s) {
    KldMoments m;
    m.count = s.count;
    if (s.count == 0) return m;
    auto log_ppl = mean_and_uncertainty(s.nll, s.nll2, s.count);
    m.ppl_b = std::exp(log_ppl.first);
    m.ppl_b_err = m.ppl_b * log_ppl.second;
    auto log_ppl_base = mean_and_uncertainty(s.nll_base, s.nll_base2, s.count);
    m.ppl_a = std::exp(log_ppl_base.first);
    m.ppl_a_err = m.ppl_a * log_ppl_base.second;
    const double cov = covariance(s.nll, s.nll_base, s.nll_nll_base, s.count);
    const double denom = log_ppl.second * log_ppl_base.second;
    m.ppl_correlation = denom > 0 ? cov / denom : 0.0;
    m.ln_ratio = log_ppl.first - log_ppl_base.first;
    const double var = log_ppl.second * log_ppl.second + log_ppl_base.second * log_ppl_base.second - 2.0 * cov;
    m.ln_ratio_err = var > 0 ? std::sqrt(var) : 0.0;
    auto kl = mean_and_uncertainty(s.kld, s.kld2, s.count);
    m.kld_mean = kl.first;
    m.kld_err = kl.second;
    auto dp = mean_and_uncertainty(s.p_diff, s.p_diff2, s.count);
    m.p_diff_mean = dp.first;
    m.p_diff_err = dp.second;
    auto mse = mean_and_uncertainty(s.p_diff2, s.p_diff4, s.count);
    m.p_diff_rms = std::sqrt(mse.first);
    m.p_diff_rms_err = m.p_diff_rms > 0 ? 0.5 / m.p_diff_rms * mse.second : 0.0;
    m.same_top_count = s.same_top;
    m.same_top = static_cast<double>(s.same_top) / static_cast<double>(s.count);
    m.same_top_err = s.count > 1 ? std::sqrt(m.same_top * (1 - m.same_top) / static_cast<double>(s.count - 1)) : 0.0;
    return m;
}

KldOrder kld_order(std::vector<float> v) {
    KldOrder o;
    if (v.empty()) return o;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    o.median = n % 2 == 0 ? 0.5f * (v[n / 2] + v[n / 2 - 1]) : v[n / 2];
    o.min = v.front();
    o.max = v.back();
    o.p01 = percentile(v, 0.001f);
    o.p1 = percentile(v, 0.010f);
    o.p5 = percentile(v, 0.050f);
    o.p10 = percentile(v, 0.100f);
    o.p25 = percentile(v, 0.250f);
    o.p75 = percentile(v, 0.750f);
    o.p90 = percentile(v, 0.900f);
    o.p95 = percentile(v, 0.950f);
    o.p99 = percentile(v, 0.990f);
    o.p999 = percentile(v, 0.999f);
    return o;
}

}  // namespace mlens
