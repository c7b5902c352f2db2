// KL-divergence statistics over a text, with llama-perplexity's definitions (tools/perplexity/
// perplexity.cpp of the pinned llama.cpp), so every figure matches its --kl-divergence output.
//
// Contract (what llama-perplexity does, reproduced operation by operation, in the same float and
// double types and order, so results agree to the last bits on the same logits):
//  - Base (model A) log-probabilities are stored compactly per scored position as llama-perplexity's
//    --kl-divergence-base file does: nv = 2*((n_vocab+1)/2) + 4 uint16 values, the first four
//    holding two floats (scale, min_log_prob), then one uint16 per token:
//      max, min = max/min logit; min = max(min, max - 16); lse = (float) log(sum_i expf(l_i - max))
//      min_log_prob = min - max - lse; scale = (max - min) / 65535
//      q_i = l_i > min ? nearest_int((l_i - min) / scale) : 0   (all 0 when scale is 0)
//    so log p_A(i) = scale*q_i + min_log_prob: log-probabilities below max - 16 are clamped there.
//  - Per scored position, with B's logits l and the token t that follows:
//      nll_B = max + lse - l_t; nll_A = -(scale*q_t + min_log_prob)
//      KLD = sum over i with log p_A(i) > -16 of p_A(i) * (log p_A(i) - log p_B(i))   (nats)
//      Δp = p_B(t) - p_A(t); same top: the first argmax of l equals the first argmax of q.
//  - Moments (mean_and_uncertainty): mean = S/N, error = sqrt((S2/N - mean²)/(N-1)) when that is
//    positive and N > 10, else 0. PPL = exp(mean nll) ± PPL·error; ln(PPL(B)/PPL(A)) with the
//    error sqrt(eB² + eA² - 2·cov), cov = (S_ab/N - S_a/N·S_b/N)/(N-1) (0 for N < 10); RMS Δp =
//    sqrt(mean Δp²) ± error(Δp²)/(2·RMS); same top share p ± sqrt(p(1-p)/(N-1)).
//  - Order statistics over the sorted float values: median (mean of the middle two for an even
//    count), percentile f: position f·(N-1) interpolated linearly between its neighbours, in float.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mlens {

// uint16 values one base position takes in the file and in memory.
inline size_t kld_base_row_size(int32_t n_vocab) { return 2 * ((static_cast<size_t>(n_vocab) + 1) / 2) + 4; }

// Fills `row` (kld_base_row_size values) from A's logits; returns A's nll of `token`.
double quantize_base_log_probs(std::span<const float> logits, std::span<uint16_t> row, int32_t token);

// The nll of `token` as llama-perplexity's plain perplexity run computes it (no logits file):
// max = the greatest logit, S = Σ expf(l_i - max) in double, nll = -((l_t - max) - log S).
double plain_token_nll(std::span<const float> logits, int32_t token);

// Running sums over scored positions, as llama-perplexity's kl_divergence_result.
struct KldSums {
    double nll = 0, nll2 = 0;  // model B
    double nll_base = 0, nll_base2 = 0;  // model A (from the stored base)
    double nll_nll_base = 0;
    double kld = 0, kld2 = 0;
    double p_diff = 0, p_diff2 = 0, p_diff4 = 0;
    float max_abs_p_diff = 0;
    uint64_t same_top = 0;
    uint64_t count = 0;
    void add(const KldSums& other);
};

// One scored position: B's logits against A's stored row.
struct KldPoint {
    float kld = 0;
    float p_diff = 0;
    int32_t top_a = 0;
    int32_t top_b = 0;
};
KldPoint score_position(std::span<const float> logits_b, std::span<const uint16_t> base_row, int32_t token, KldSums& sums);

// The figures llama-perplexity prints from the sums.
struct KldMoments {
    uint64_t count = 0;
    double ppl_a = 0, ppl_a_err = 0;
    double ppl_b = 0, ppl_b_err = 0;
    double ln_ratio = 0, ln_ratio_err = 0;  // ln(PPL(B)/PPL(A))
    double ppl_correlation = 0;  // of ln PPL(A) and ln PPL(B), in [-1, 1]
    double kld_mean = 0, kld_err = 0;
    double p_diff_mean = 0, p_diff_err = 0;
    double p_diff_rms = 0, p_diff_rms_err = 0;
    double same_top = 0, same_top_err = 0;  // share in [0, 1]
    uint64_t same_top_count = 0;
};
KldMoments kld_moments(const KldSums& sums);

// Order statistics of the per-position values (llama-perplexity's median and percentile).
struct KldOrder {
    double min = 0, p01 = 0, p1 = 0, p5 = 0, p10 = 0, p25 = 0, median = 0, p75 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
};
KldOrder kld_order(std::vector<float> values);

}  // namespace mlens
