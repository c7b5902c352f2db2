// A/B: the same prompt on two models, position by position.
//
// Contract:
//  - Both models must share the vocabulary: the same token count and the same text for every
//    token id; otherwise ErrorCode::E_VOCAB_MISMATCH names the first difference.
//  - A and B are two sessions (each has its own context); the same file may be loaded twice.
//  - The prompt is tokenized with model A. Model A's greedy continuation of max_tokens tokens is
//    fed to both models, and both are decoded on the same schedule (the prompt in one batch with
//    logits for every position, then one token per call), so a model compared with itself gives
//    bit-identical logits and KLD exactly 0.
//  - Position i is "after token i": the next-token distributions of A (the reference, p) and B
//    (q) there. Prompt positions are 0..n_prompt-1; generated positions follow (the last
//    generated token is not fed, so there are n_prompt + n_generated - 1 positions).
//  - Per position: KL(p||q) in nats, the top-1 token of each, top-k overlap |topk(p) ∩ topk(q)|/k.
//    first_divergence is the first position whose top-1 tokens differ (-1: none).
//  - Summary (as llama.cpp's perplexity --kl-divergence prints): mean, median, 99th percentile
//    (linear interpolation between the closest ranks) and maximum KLD, and the share of
//    positions with the same top token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"

namespace mlens {

struct AbOptions {
    int max_tokens = 16;
    int top_k = 5;
    TokenizeOptions tokenize;
};

struct AbPosition {
    int32_t index = 0;
    int32_t token = 0;  // the token fed at this position
    bool generated = false;  // the token came from A's continuation
    double kld = 0.0;
    int32_t top_a = 0;
    int32_t top_b = 0;
    double prob_top_a = 0.0;  // A's probability of its own top token
    double prob_top_b = 0.0;  // B's probability of its own top token
    double topk_overlap = 0.0;  // in [0, 1]
};

struct AbSummary {
    size_t positions = 0;
    double mean_kld = 0.0;
    double median_kld = 0.0;
    double p99_kld = 0.0;
    double max_kld = 0.0;
    double same_top_share = 0.0;  // in [0, 1]
    double mean_topk_overlap = 0.0;
    int64_t first_divergence = -1;
};

struct AbResult {
    std::vector<int32_t> tokens;  // prompt + A's continuation
    size_t n_prompt = 0;
    std::vector<AbPosition> positions;
    AbSummary summary;
    std::string continuation;  // A's continuation detokenized
};

Status check_same_vocab(const Session& a, const Session& b);
AbSummary summarize_ab(const std::vector<AbPosition>& positions);
// Percentile q in [0, 100] of unsorted values, linear between closest ranks; 0 for no values.
double percentile(std::vector<double> values, double q);

Result<AbResult> compare_ab(Session& a, Session& b, std::string_view prompt, const AbOptions& options, JobContext* job = nullptr);

}  // namespace mlens
