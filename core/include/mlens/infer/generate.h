// Generation: a prompt, then up to max_tokens next tokens, with the top candidates of every step.
//
// Contract:
//  - The session's context is cleared, the prompt is decoded in one llama_decode call, then each
//    chosen token is decoded on its own (the same schedule as a plain llama.cpp loop).
//  - Each step's candidates are the n_candidates highest logits with their probabilities from a
//    softmax over the full vocabulary at temperature 1 (what the model says, independent of the
//    sampling settings); `prob` of the step is the chosen token's probability under it.
//  - Sampling follows TokenSampler (distribution.h): greedy unless temperature > 0.
//  - Generation stops after max_tokens, at an end-of-generation token when stop_at_eog (the token
//    is reported as the last step), or when the context is full.
//  - Speeds: prompt tokens / time in the prompt's llama_decode; generated tokens decoded /
//    time in their llama_decode calls (sampling and our softmax are not counted), in tokens/s.
//  - on_step runs on the calling thread after each step (streaming); cancel via the JobContext
//    (checked between steps and inside llama_decode) returns ErrorCode::E_CANCELLED.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/infer/distribution.h"
#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"

namespace mlens {

struct GenerateOptions {
    int max_tokens = 32;
    int n_candidates = 5;
    SamplingParams sampling;
    TokenizeOptions tokenize;
    bool stop_at_eog = true;
};

struct TokenCandidate {
    int32_t id = 0;
    std::string piece;
    float logit = 0.0f;
    double prob = 0.0;
};

struct GenerationStep {
    int32_t token = 0;
    std::string piece;
    double prob = 0.0;
    std::vector<TokenCandidate> candidates;
};

enum class StopReason { max_tokens, end_of_generation, context_full };
const char* stop_reason_name(StopReason reason);

struct GenerationResult {
    std::vector<int32_t> prompt_tokens;
    std::vector<GenerationStep> steps;
    std::string text;  // the generated tokens detokenized
    StopReason stop = StopReason::max_tokens;
    double prompt_ms = 0.0;
    double generation_ms = 0.0;
    int generation_decoded = 0;  // generated tokens that went through llama_decode
    double prompt_tokens_per_s = 0.0;
    double generation_tokens_per_s = 0.0;
};

using StepCallback = std::function<void(const GenerationStep&)>;

Result<GenerationResult> generate(Session& session, std::string_view prompt, const GenerateOptions& options, JobContext* job = nullptr,
                                  const StepCallback& on_step = {});
Result<GenerationResult> generate_from_tokens(Session& session, std::vector<int32_t> prompt_tokens, const GenerateOptions& options,
                                              JobContext* job = nullptr, const StepCallback& on_step = {});

}  // namespace mlens
