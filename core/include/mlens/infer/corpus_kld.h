// Corpus KL divergence: model B scored against model A over a whole text, as
// `llama-perplexity --kl-divergence-base` then `--kl-divergence` scores it (figures defined in
// kld_statistics.h).
//
// Contract:
//  - The text is tokenized by A (or, with a base file, by B) with llama_tokenize add_special and no
//    special-token parsing, after dropping one trailing newline (llama-perplexity's -f reading).
//    It is cut into n_chunk = min(tokens / n_ctx, max_chunks) chunks of n_ctx tokens; fewer than
//    2·n_ctx tokens is ErrorCode::E_TEXT_TOO_SHORT. Chunks are decoded as llama-perplexity decodes
//    them with `-c n_ctx -b n_batch -ub n_ubatch` (chunk_batches.h: n_batch / n_ctx chunks at a
//    time, each in its own sequence, from an empty KV cache; a chunk longer than the batch in
//    several passes), each chunk's first token replaced by BOS when the vocabulary adds BOS;
//    positions n_ctx/2 .. n_ctx-2 are scored against the token that follows (n_ctx - 1 - n_ctx/2
//    per chunk).
//  - Contexts: each model gets its own llama.cpp context laid out as llama-perplexity's (not
//    capped at the training context, as llama-perplexity does not cap it), the session's thread
//    count, F16 KV cache and llama.cpp's default flash attention setting, so the logits are the
//    same bits as llama-perplexity's with the same -c, -b, -ub and -t; the defaults of n_batch
//    and n_ubatch are llama-perplexity's (2048, 512).
//  - A's logits are kept only as llama-perplexity's compact rows (kld_statistics.h). save_base
//    writes them as llama-perplexity's logits file, which it reads with --kl-divergence-base and
//    which `base` reads back (both directions): "_logits_", u32 n_ctx, i32 n_vocab, i32 n_chunk,
//    n_chunk·n_ctx i32 tokens, then per chunk (n_ctx - 1 - n_ctx/2) rows of
//    kld_base_row_size(n_vocab) uint16, little-endian. The file goes through SafeFileWriter
//    (never onto an input: both models, the text). With `base`, A is not run: the tokens and
//    n_ctx come from the file (a different --ctx is ErrorCode::E_KLD_BASE), which is checked against its
//    size and B's vocabulary before use: ErrorCode::E_KLD_BASE names the header field and its
//    offset; a file that holds more than 2^24 tokens (a sparse file may claim any size) is
//    ErrorCode::E_LIMIT (field n_chunk, offset 16), refused before anything is allocated; a row
//    whose scale or min_log_prob is not finite (or whose scale is negative) holds no
//    log-probability and is ErrorCode::E_KLD_BASE naming the chunk and row, never a NaN result.
//  - Both models must share the vocabulary (check_same_vocab). on_chunk runs after each chunk.
//    Cancel stops between positions and inside llama_decode (ErrorCode::E_CANCELLED); progress is the
//    share of chunks done.
//  - Per-position post-processing runs on the session's thread count (parallel_for); the sums
//    are added per thread and then together, so the last bits of sums may vary from run to run,
//    as llama-perplexity's do. A chunk's `seconds` is its share of its group's decoding plus its
//    own scoring.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/infer/kld_statistics.h"
#include "mlens/infer/session.h"

namespace mlens {

struct KldOptions {
    uint32_t n_ctx = 512;
    int32_t max_chunks = -1;  // -1: every whole chunk of the text
    uint32_t n_batch = 2048;  // llama-perplexity's -b
    uint32_t n_ubatch = 512;  // llama-perplexity's -ub
    std::string save_base;  // write A's rows here (empty: do not)
    std::string base;  // read A's rows from here instead of running A
};

struct KldChunk {
    int32_t index = 0;
    KldSums sums;  // this chunk's positions only
    double seconds = 0;  // decoding and scoring this chunk (both models)
};

struct CorpusKldResult {
    uint32_t n_ctx = 0;
    int32_t n_chunk = 0;
    int32_t n_vocab = 0;
    uint64_t text_tokens = 0;  // tokens of the whole text
    std::vector<int32_t> tokens;  // the n_chunk·n_ctx evaluated tokens (as in the text)
    // Per scored position, chunk by chunk (n_chunk · (n_ctx - 1 - n_ctx/2)):
    std::vector<float> kld;
    std::vector<float> p_diff;
    std::vector<int32_t> top_a;
    std::vector<int32_t> top_b;
    std::vector<KldChunk> chunks;
    KldSums total;
    double seconds = 0;
};

// First scored position of a chunk and how many there are.
inline uint32_t kld_first_scored(uint32_t n_ctx) { return n_ctx / 2; }
inline uint32_t kld_scored_per_chunk(uint32_t n_ctx) { return n_ctx - 1 - n_ctx / 2; }

using KldChunkCallback = std::function<void(const KldChunk& chunk)>;

// a: the reference model (null when options.base names a base file); b: the model scored.
// inputs: paths and model references (as the user gave them) that the file written by
// options.save_base may not replace, nor lie in the store of (add_reference_inputs,
// reference_inputs.h); the sessions' own files are protected too.
Result<CorpusKldResult> corpus_kld(Session* a, Session& b, std::string_view text, const KldOptions& options, JobContext* job = nullptr,
                                   const KldChunkCallback& on_chunk = {}, const std::vector<std::string>& inputs = {});

}  // namespace mlens
