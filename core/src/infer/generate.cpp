#include "mlens/infer/generate.h"

#include <llama.h>

#include <chrono>
#include <cmath>

#include "infer_internal.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

double elapsed_ms(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

double rate(double tokens, double ms) { return ms > 0.0 ? tokens * 1000.0 / ms : 0.0; }

double probability(std::span<const float> logits, int32_t id, double log_sum) {
    const float v = logits[static_cast<size_t>(id)];
    return std::isfinite(v) ? std::exp(static_cast<double>(v) - log_sum) : 0.0;
}

std::vector<TokenCandidate> candidates_from(const Session& session, std::span<const float> logits, double log_sum, int k) {
    std::vector<TokenCandidate> out;
    for (int32_t id : top_k(logits, k)) {
        auto piece = token_piece(session, id);
        out.push_back({id, piece ? piece->piece : std::string(), logits[static_cast<size_t>(id)], probability(logits, id, log_sum)});
    }
    return out;
}

}  // namespace

const char* stop_reason_name(StopReason reason) {
    static constexpr NameRow<StopReason> kNames[] = {
        {StopReason::max_tokens, "max_tokens"}, {StopReason::end_of_generation, "end_of_generation"},
        {StopReason::context_full, "context_full"}};
    return name_of(kNames, reason, "max_tokens");
}

Result<GenerationResult> generate(Session& session, std::string_view prompt, const GenerateOptions& options, JobContext* job,
                                  const StepCallback& on_step) {
    auto tokens = tokenize_ids(session, prompt, options.tokenize);
    if (!tokens) return tokens.error();
    return generate_from_tokens(session, std::move(*tokens), options, job, on_step);
}

Result<GenerationResult> generate_from_tokens(Session& session, std::vector<int32_t> prompt_tokens, const GenerateOptions& options,
                                              JobContext* job, const StepCallback& on_step) {
    if (!session.context()) return vocab_only_error(session);
    if (prompt_tokens.empty()) return Error{ErrorCode::E_EMPTY_PROMPT, "", std::nullopt, "the prompt has no tokens"};
    if (prompt_tokens.size() > session.n_ctx())
        return Error{
            ErrorCode::E_CONTEXT, "", std::nullopt,
            "the prompt has " + std::to_string(prompt_tokens.size()) + " tokens; the context holds " + std::to_string(session.n_ctx())};
    LogScope scope(&session.log());
    Session::JobBinding binding(session, job);
    llama_context* ctx = session.context();
    llama_memory_clear(llama_get_memory(ctx), true);

    GenerationResult result;
    result.prompt_tokens = std::move(prompt_tokens);
    auto start = std::chrono::steady_clock::now();
    Status st = infer_detail::decode(session, ctx, result.prompt_tokens, 0, false, job);
    if (!st) return st.error();
    result.prompt_ms = elapsed_ms(start);
    result.prompt_tokens_per_s = rate(static_cast<double>(result.prompt_tokens.size()), result.prompt_ms);

    TokenSampler sampler(options.sampling);
    std::vector<int32_t> generated;
    auto pos = static_cast<int32_t>(result.prompt_tokens.size());
    int32_t row = -1;  // the last output of the latest decode
    for (int i = 0; i < options.max_tokens; ++i) {
        if (job_cancelled(job)) return cancelled_error();
        std::span<const float> logits = infer_detail::logits_row(session, ctx, row);
        if (logits.empty()) return Error{ErrorCode::E_LLAMA_DECODE, "", std::nullopt, "llama.cpp returned no logits"};
        GenerationStep step;
        step.token = sampler.sample(logits);
        const double log_sum = log_sum_exp(logits);
        step.candidates = candidates_from(session, logits, log_sum, options.n_candidates);
        step.prob = probability(logits, step.token, log_sum);
        auto piece = token_piece(session, step.token);
        if (piece) step.piece = piece->piece;
        generated.push_back(step.token);
        result.steps.push_back(step);
        if (on_step) on_step(step);
        job_report(job, static_cast<double>(i + 1) / options.max_tokens);

        if (options.stop_at_eog && llama_vocab_is_eog(session.vocab(), step.token)) {
            result.stop = StopReason::end_of_generation;
            break;
        }
        if (i + 1 == options.max_tokens) break;
        if (static_cast<uint32_t>(pos) >= session.n_ctx()) {
            result.stop = StopReason::context_full;
            break;
        }
        const int32_t next[1] = {step.token};
        auto t0 = std::chrono::steady_clock::now();
        st = infer_detail::decode(session, ctx, next, pos, false, job);
        if (!st) return st.error();
        result.generation_ms += elapsed_ms(t0);
        ++result.generation_decoded;
        ++pos;
    }
    result.generation_tokens_per_s = rate(result.generation_decoded, result.generation_ms);
    auto text = detokenize(session, generated, false, true);
    if (text) result.text = std::move(*text);
    return result;
}

}  // namespace mlens
