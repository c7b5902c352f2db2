#include "mlens/infer/ab_compare.h"

#include <llama.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "infer_internal.h"
#include "mlens/infer/distribution.h"

namespace mlens {

namespace {

AbPosition compare_rows(std::span<const float> la, std::span<const float> lb, int k) {
    AbPosition p;
    std::vector<double> logp = log_softmax(la);
    std::vector<double> logq = log_softmax(lb);
    p.kld = kl_divergence(logp, logq);
    std::vector<int32_t> ka = top_k(la, k), kb = top_k(lb, k);
    p.top_a = ka.empty() ? -1 : ka[0];
    p.top_b = kb.empty() ? -1 : kb[0];
    if (p.top_a >= 0) p.prob_top_a = std::exp(logp[static_cast<size_t>(p.top_a)]);
    if (p.top_b >= 0) p.prob_top_b = std::exp(logq[static_cast<size_t>(p.top_b)]);
    size_t shared = 0;
    for (int32_t id : ka) shared += std::count(kb.begin(), kb.end(), id) > 0 ? 1 : 0;
    p.topk_overlap = ka.empty() ? 0.0 : static_cast<double>(shared) / static_cast<double>(ka.size());
    return p;
}

}  // namespace

Status check_same_vocab(const Session& a, const Session& b) {
    const int32_t na = a.facts().n_vocab, nb = b.facts().n_vocab;
    if (na != nb)
        return Error{ErrorCode::E_VOCAB_MISMATCH, "", std::nullopt,
                     "the models have different vocabularies: " + std::to_string(na) + " vs " + std::to_string(nb) + " tokens"};
    for (int32_t id = 0; id < na; ++id) {
        const char* ta = llama_vocab_get_text(a.vocab(), id);
        const char* tb = llama_vocab_get_text(b.vocab(), id);
        if (std::strcmp(ta ? ta : "", tb ? tb : "") != 0)
            return Error{ErrorCode::E_VOCAB_MISMATCH, "", std::nullopt,
                         "the models have different vocabularies: token " + std::to_string(id) + " differs"};
    }
    return ok_status();
}

double percentile(std::vector<double> values, double q) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(rank));
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

AbSummary summarize_ab(const std::vector<AbPosition>& positions) {
    AbSummary s;
    s.positions = positions.size();
    if (positions.empty()) return s;
    std::vector<double> kld;
    size_t same = 0;
    for (const AbPosition& p : positions) {
        kld.push_back(p.kld);
        s.mean_kld += p.kld;
        s.max_kld = std::max(s.max_kld, p.kld);
        s.mean_topk_overlap += p.topk_overlap;
        if (p.top_a == p.top_b)
            ++same;
        else if (s.first_divergence < 0)
            s.first_divergence = p.index;
    }
    const auto n = static_cast<double>(positions.size());
    s.mean_kld /= n;
    s.mean_topk_overlap /= n;
    s.same_top_share = static_cast<double>(same) / n;
    s.median_kld = percentile(kld, 50.0);
    s.p99_kld = percentile(kld, 99.0);
    return s;
}

Result<AbResult> compare_ab(Session& a, Session& b, std::string_view prompt, const AbOptions& options, JobContext* job) {
    if (!a.context()) return vocab_only_error(a);
    if (!b.context()) return vocab_only_error(b);
    if (&a == &b) return Error{ErrorCode::E_SAME_SESSION, "", std::nullopt, "A and B must be two sessions (load the file twice)"};
    Status same = check_same_vocab(a, b);
    if (!same) return same.error();
    auto tokens = tokenize_ids(a, prompt, options.tokenize);
    if (!tokens) return tokens.error();
    if (tokens->empty()) return Error{ErrorCode::E_EMPTY_PROMPT, "", std::nullopt, "the prompt has no tokens"};
    const size_t limit = std::min(a.n_ctx(), b.n_ctx());
    if (tokens->size() > limit)
        return Error{ErrorCode::E_CONTEXT, "", std::nullopt,
                     "the prompt has " + std::to_string(tokens->size()) + " tokens; the contexts hold " + std::to_string(limit)};

    AbResult result;
    result.tokens = std::move(*tokens);
    result.n_prompt = result.tokens.size();
    Session::JobBinding bind_a(a, job), bind_b(b, job);
    llama_context* ca = a.context();
    llama_context* cb = b.context();
    llama_memory_clear(llama_get_memory(ca), true);
    llama_memory_clear(llama_get_memory(cb), true);

    auto decode_both = [&](std::span<const int32_t> toks, int32_t pos0, bool all) -> Status {
        {
            LogScope scope(&a.log());
            Status st = infer_detail::decode(a, ca, toks, pos0, all, job);
            if (!st) return st;
        }
        LogScope scope(&b.log());
        return infer_detail::decode(b, cb, toks, pos0, all, job);
    };
    auto add_position = [&](int32_t row, size_t index, bool generated) {
        AbPosition p = compare_rows(infer_detail::logits_row(a, ca, row), infer_detail::logits_row(b, cb, row), options.top_k);
        p.index = static_cast<int32_t>(index);
        p.token = result.tokens[index];
        p.generated = generated;
        result.positions.push_back(p);
    };

    Status st = decode_both(result.tokens, 0, true);
    if (!st) return st.error();
    for (size_t i = 0; i < result.n_prompt; ++i) add_position(static_cast<int32_t>(i), i, false);

    std::vector<int32_t> continuation;
    for (int step = 0; step < options.max_tokens; ++step) {
        if (job_cancelled(job)) return cancelled_error();
        const int32_t next = result.positions.back().top_a;
        continuation.push_back(next);
        result.tokens.push_back(next);
        job_report(job, static_cast<double>(step + 1) / options.max_tokens);
        if (step + 1 == options.max_tokens || result.tokens.size() > limit) break;
        const int32_t fed[1] = {next};
        st = decode_both(fed, static_cast<int32_t>(result.tokens.size() - 1), false);
        if (!st) return st.error();
        add_position(-1, result.tokens.size() - 1, true);
    }
    result.summary = summarize_ab(result.positions);
    auto text = detokenize(a, continuation, false, true);
    if (text) result.continuation = std::move(*text);
    return result;
}

}  // namespace mlens
