// How llama-perplexity lays the chunks of a text into llama.cpp batches, and the decoding of one
// group of chunks: the one definition corpus KLD (corpus_kld.h) and corpus perplexity
// (corpus_perplexity.h) share, so their logits are llama-perplexity's bits at any -c, -b and -ub.
//
// With chunks of n_ctx tokens, a batch of n_batch and a micro-batch of n_ubatch tokens
// (llama-perplexity's -c, -b, -ub; its defaults 2048 and 512):
//  - n_seq = max(1, n_batch / n_ctx) chunks are decoded together, chunk k of a group in sequence k;
//  - the context holds n_seq · n_ctx tokens in n_seq sequences (each its own KV cache), its batch
//    min(n_batch, n_seq · n_ctx), its micro-batch n_ubatch (llama.cpp caps it at the batch);
//  - a chunk longer than the batch is decoded in ceil(n_ctx / batch) passes at positions
//    pass · batch + k, and the rows of its scored positions are gathered;
//  - each chunk's first token is replaced by BOS when the vocabulary adds one; logits are asked
//    for positions n_ctx/2 .. n_ctx-1 (kld_first_scored).
// A cancelled job stops inside llama_decode (E_CANCELLED); a failed decode is E_LLAMA_DECODE and a
// context llama.cpp refuses E_LLAMA_CONTEXT, each with llama.cpp's own log lines.
#pragma once

#include <llama.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "mlens/infer/session.h"
#include "mlens/job.h"
#include "mlens/result.h"

namespace mlens::infer_detail {

// The most tokens a chunk, a batch or a micro-batch may have.
constexpr uint32_t kMaxChunkTokens = 1u << 20;

// E_USAGE unless the batch and the micro-batch are 1 .. kMaxChunkTokens tokens.
Status check_batch_sizes(uint32_t n_batch, uint32_t n_ubatch);

// The evaluated tokens of a text for chunks of n_ctx tokens, as llama-perplexity reads `-f`:
// one trailing newline dropped, tokenized by `session` with add_special and no special-token
// parsing, cut to n_chunk = min(tokens / n_ctx, max_chunks) whole chunks (max_chunks -1: all).
// A context outside 4 .. kMaxChunkTokens is E_USAGE; fewer than 2·n_ctx tokens E_TEXT_TOO_SHORT.
struct CorpusTokens {
    std::vector<int32_t> tokens;  // n_chunk · n_ctx
    uint64_t text_tokens = 0;  // of the whole text
    int32_t n_chunk = 0;
};
Result<CorpusTokens> corpus_tokens(Session& session, std::string_view text, uint32_t n_ctx, int32_t max_chunks);

struct ChunkBatching {
    uint32_t n_ctx = 0;  // tokens per chunk
    uint32_t n_seq = 1;  // chunks decoded together
    uint32_t n_batch = 0;  // tokens per llama_decode call
    uint32_t n_ubatch = 0;  // the micro-batch asked for
    uint32_t passes = 1;  // llama_decode calls per group
};

// The layout for chunks of n_ctx tokens with the user's batch and micro-batch (both >= 1).
ChunkBatching chunk_batching(uint32_t n_ctx, uint32_t n_batch, uint32_t n_ubatch);

using ContextPtr = std::unique_ptr<llama_context, decltype(&llama_free)>;

// A context of `session` laid out as `layout` says.
Result<ContextPtr> make_chunk_context(Session& session, const ChunkBatching& layout);

// Decodes groups of chunks in one context and hands out each chunk's scored rows.
class ChunkGroupDecoder {
public:
    ChunkGroupDecoder(Session& session, llama_context* ctx, const ChunkBatching& layout);

    // Decodes `count` (1..n_seq) whole chunks of n_ctx tokens starting at `chunks`, from an empty
    // KV cache.
    Status decode(std::span<const int32_t> chunks, uint32_t count, JobContext* job);

    // The logits of chunk `seq` of the last group: n_ctx - n_ctx/2 rows of n_vocab floats, for
    // positions n_ctx/2 .. n_ctx-1 in order.
    const float* rows(uint32_t seq) const;

private:
    Session& m_session;
    llama_context* m_ctx;
    ChunkBatching m_layout;
    std::vector<float> m_gathered;  // the rows of a chunk decoded in several passes
};

}  // namespace mlens::infer_detail
