// Next-token distributions over the full vocabulary: softmax, top-k, KL divergence, sampling.
//
// Contract:
//  - log_softmax works in double over every logit (max-subtracted), so probabilities of a
//    150k vocabulary sum to 1 within 1e-12; non-finite logits (e.g. -inf from a mask) get
//    probability 0.
//  - top_k returns the k highest logits, highest first; ties go to the lower id. For k much smaller
//    than the vocabulary it is one pass keeping the best k, with the same result as a full sort.
//  - kl_divergence(p, q) = sum_i p_i (log p_i - log q_i) over log-probabilities, the direction
//    llama.cpp's perplexity tool uses (p = the reference/base model). Terms with p_i = 0 add 0;
//    a token with p_i > 0 and q_i = 0 makes it +inf.
//  - TokenSampler: temperature <= 0 is greedy (argmax, ties to the lower id). Otherwise logits
//    are divided by the temperature, cut to the top_k highest (top_k <= 0: no cut), then to the
//    smallest prefix whose probability reaches top_p (top_p >= 1: no cut), renormalised, and one
//    token is drawn with a std::mt19937_64 seeded by `seed`: the same seed and logits give the
//    same tokens on every machine (the draw uses our own uniform from the raw 64-bit output).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace mlens {

std::vector<double> log_softmax(std::span<const float> logits);
// log Σ exp(logit) over the finite logits, max-subtracted, exponentials in float summed in double
// (what a generation step needs for a few probabilities, without a vector of the vocabulary);
// -inf when no logit is finite. exp(logit - log_sum_exp) is that token's probability.
double log_sum_exp(std::span<const float> logits);
std::vector<int32_t> top_k(std::span<const float> logits, int k);
int32_t argmax(std::span<const float> logits);
double kl_divergence(std::span<const double> log_p, std::span<const double> log_q);

struct SamplingParams {
    float temperature = 0.0f;  // <= 0: greedy
    int top_k = 40;
    float top_p = 0.95f;
    uint64_t seed = 0;
};

class TokenSampler {
public:
    explicit TokenSampler(const SamplingParams& params) : m_params(params), m_rng(params.seed) {}
    int32_t sample(std::span<const float> logits);

private:
    SamplingParams m_params;
    std::mt19937_64 m_rng;
};

}  // namespace mlens
