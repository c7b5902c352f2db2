// Corpus perplexity: one model scored over a whole text as llama-perplexity scores it without
// --kl-divergence (its "Final estimate: PPL = …" and the running "[chunk]PPL" figures).
//
// Contract:
//  - The text is read, tokenized, cut into chunks and decoded exactly as corpus KLD reads and
//    decodes it (corpus_kld.h: one trailing newline dropped, add_special without special-token
//    parsing, min(tokens / n_ctx, max_chunks) chunks, fewer than 2·n_ctx tokens is
//    E_TEXT_TOO_SHORT; llama-perplexity's batching with -c n_ctx -b n_batch -ub n_ubatch,
//    chunk_batches.h), so the logits are llama-perplexity's bits.
//  - Positions n_ctx/2 .. n_ctx-2 of each chunk are scored against the token that follows, each
//    with llama-perplexity's plain negative log-likelihood (plain_token_nll, kld_statistics.h).
//    The sums are added per thread and then together, as llama-perplexity's workers add them.
//  - After each chunk, its running perplexity exp(Σnll / count) (llama-perplexity's "[i]x").
//    Final: ppl = exp(mean nll) and ppl_err = ppl · sqrt((mean nll² − mean²) / (count − 1)); when
//    mean nll² − mean² is not positive llama-perplexity prints no estimate, and ppl_err is 0.
//  - Cancel stops between positions and inside llama_decode (E_CANCELLED); progress is the share
//    of chunks done; on_chunk runs after each chunk.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "mlens/infer/session.h"
#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens {

struct PerplexityOptions {
    uint32_t n_ctx = 512;  // llama-perplexity's -c
    int32_t max_chunks = -1;  // -1: every whole chunk of the text
    uint32_t n_batch = 2048;  // llama-perplexity's -b
    uint32_t n_ubatch = 512;  // llama-perplexity's -ub
};

struct PerplexityChunk {
    int32_t index = 0;
    double running_ppl = 0;  // over every chunk so far
    double nll = 0;  // this chunk's Σnll
    double seconds = 0;  // its share of its group's decoding plus its own scoring
};

struct CorpusPerplexityResult {
    uint32_t n_ctx = 0;
    int32_t n_chunk = 0;
    uint64_t text_tokens = 0;  // tokens of the whole text
    uint64_t count = 0;  // positions scored
    double nll = 0, nll2 = 0;  // Σnll and Σnll² over them
    double ppl = 0, ppl_err = 0;
    std::vector<PerplexityChunk> chunks;
    double seconds = 0;
};

using PerplexityChunkCallback = std::function<void(const PerplexityChunk& chunk)>;

Result<CorpusPerplexityResult> corpus_perplexity(Session& session, std::string_view text, const PerplexityOptions& options,
                                                 JobContext* job = nullptr, const PerplexityChunkCallback& on_chunk = {});

}  // namespace mlens
