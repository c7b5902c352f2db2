#include "mlens/infer/corpus_perplexity.h"

#include <llama.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <vector>

#include "chunk_batches.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/kld_statistics.h"
#include "mlens/util/parallel.h"

namespace mlens {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Σnll and Σnll² of one chunk's scored positions, `rows` its logits (ChunkGroupDecoder::rows).
Result<std::pair<double, double>> score_chunk(const float* rows, const int32_t* chunk_tokens, uint32_t n_ctx, size_t n_vocab,
                                              unsigned threads, JobContext* job) {
    const uint32_t first = kld_first_scored(n_ctx), n_scored = kld_scored_per_chunk(n_ctx);
    // One task per block of positions, each with its own sums, as llama-perplexity's workers; the
    // sums are added in block order, so a run gives the same digits whichever thread was first.
    const uint64_t block = 16;
    const uint64_t n_blocks = (n_scored + block - 1) / block;
    std::vector<std::pair<double, double>> sums(n_blocks);
    const bool finished = parallel_for(n_blocks, threads, [&](uint64_t blk) {
        double local = 0, local2 = 0;
        const uint64_t end = std::min<uint64_t>(n_scored, (blk + 1) * block);
        for (uint64_t i = blk * block; i < end; ++i) {
            const double v = plain_token_nll({rows + i * n_vocab, n_vocab}, chunk_tokens[first + i + 1]);
            local += v;
            local2 += v * v;
        }
        sums[blk] = {local, local2};
        return !job_cancelled(job);
    });
    if (!finished) return cancelled_error();
    double nll = 0, nll2 = 0;
    for (const auto& [one, two] : sums) {
        nll += one;
        nll2 += two;
    }
    return std::pair{nll, nll2};
}

}  // namespace

Result<CorpusPerplexityResult> corpus_perplexity(Session& session, std::string_view text, const PerplexityOptions& options, JobContext* job,
                                                 const PerplexityChunkCallback& on_chunk) {
    if (session.facts().vocab_only) return vocab_only_error(session);
    Status sizes = infer_detail::check_batch_sizes(options.n_batch, options.n_ubatch);
    if (!sizes) return sizes.error();
    auto tokens = infer_detail::corpus_tokens(session, text, options.n_ctx, options.max_chunks);
    if (!tokens) return tokens.error();
    CorpusPerplexityResult r;
    r.n_ctx = options.n_ctx;
    r.n_chunk = tokens->n_chunk;
    r.text_tokens = tokens->text_tokens;
    const infer_detail::ChunkBatching layout = infer_detail::chunk_batching(r.n_ctx, options.n_batch, options.n_ubatch);
    auto ctx = infer_detail::make_chunk_context(session, layout);
    if (!ctx) return ctx.error();
    infer_detail::ChunkGroupDecoder decoder(session, ctx->get(), layout);
    const auto n_vocab = static_cast<size_t>(session.facts().n_vocab);
    const auto threads = static_cast<unsigned>(std::max(1, session.options().n_threads));
    const auto started = Clock::now();
    for (int32_t group = 0; group < r.n_chunk; group += static_cast<int32_t>(layout.n_seq)) {
        const auto group_start = Clock::now();
        const auto count = static_cast<uint32_t>(std::min<int32_t>(static_cast<int32_t>(layout.n_seq), r.n_chunk - group));
        const int32_t* group_tokens = tokens->tokens.data() + static_cast<size_t>(group) * r.n_ctx;
        Status decoded = decoder.decode({group_tokens, static_cast<size_t>(count) * r.n_ctx}, count, job);
        if (!decoded) return decoded.error();
        const double decode_share = seconds_since(group_start) / count;
        for (uint32_t seq = 0; seq < count; ++seq) {
            const auto scoring_start = Clock::now();
            auto sums = score_chunk(decoder.rows(seq), group_tokens + static_cast<size_t>(seq) * r.n_ctx, r.n_ctx, n_vocab, threads, job);
            if (!sums) return sums.error();
            r.nll += sums->first;
            r.nll2 += sums->second;
            r.count += kld_scored_per_chunk(r.n_ctx);
            PerplexityChunk chunk{group + static_cast<int32_t>(seq), std::exp(r.nll / static_cast<double>(r.count)), sums->first,
                                  decode_share + seconds_since(scoring_start)};
            r.chunks.push_back(chunk);
            if (on_chunk) on_chunk(chunk);
            job_report(job, static_cast<double>(chunk.index + 1) / static_cast<double>(r.n_chunk));
        }
    }
    // llama-perplexity's final estimate, operation by operation.
    const double mean = r.nll / static_cast<double>(r.count);
    r.ppl = std::exp(mean);
    const double variance = r.nll2 / static_cast<double>(r.count) - mean * mean;
    r.ppl_err = variance > 0 ? std::sqrt(variance / static_cast<double>(r.count - 1)) * r.ppl : 0;
    r.seconds = seconds_since(started);
    return r;
}

}  // namespace mlens
