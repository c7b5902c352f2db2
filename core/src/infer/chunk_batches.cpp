#include "chunk_batches.h"

#include <algorithm>
#include <string>

#include "infer_internal.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/llama_log.h"
#include "mlens/infer/tokenizer.h"

namespace mlens::infer_detail {

namespace {

// Appends llama.cpp's log lines since `first_line` to `message`.
std::string with_log(Session& session, uint64_t first_line, std::string message) {
    session.log().flush();
    std::string why = session.log().problems_since(first_line);
    return why.empty() ? message : message + ": " + why;
}

Error usage(std::string message) { return Error{ErrorCode::E_USAGE, "", std::nullopt, std::move(message)}; }

}  // namespace

Status check_batch_sizes(uint32_t n_batch, uint32_t n_ubatch) {
    if (n_batch < 1 || n_batch > kMaxChunkTokens || n_ubatch < 1 || n_ubatch > kMaxChunkTokens)
        return usage("the batch and the micro-batch must be between 1 and " + std::to_string(kMaxChunkTokens) + " tokens");
    return ok_status();
}

Result<CorpusTokens> corpus_tokens(Session& session, std::string_view text, uint32_t n_ctx, int32_t max_chunks) {
    if (n_ctx < 4 || n_ctx > kMaxChunkTokens)
        return usage("the context must be between 4 and " + std::to_string(kMaxChunkTokens) + " tokens");
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    auto tokens = tokenize_ids(session, text, TokenizeOptions{true, false});
    if (!tokens) return tokens.error();
    CorpusTokens out;
    out.text_tokens = tokens->size();
    if (tokens->size() < 2 * static_cast<size_t>(n_ctx))
        return Error{ErrorCode::E_TEXT_TOO_SHORT, "", std::nullopt,
                     "the text has " + std::to_string(tokens->size()) + " tokens; a context of " + std::to_string(n_ctx) +
                         " needs at least " + std::to_string(2 * static_cast<uint64_t>(n_ctx))};
    out.n_chunk = static_cast<int32_t>(tokens->size() / n_ctx);
    if (max_chunks >= 0) out.n_chunk = std::min(out.n_chunk, max_chunks);
    tokens->resize(static_cast<size_t>(out.n_chunk) * n_ctx);
    out.tokens = std::move(*tokens);
    return out;
}

ChunkBatching chunk_batching(uint32_t n_ctx, uint32_t n_batch, uint32_t n_ubatch) {
    ChunkBatching b;
    b.n_ctx = n_ctx;
    b.n_seq = std::max<uint32_t>(1, n_batch / n_ctx);
    b.n_batch = std::min<uint64_t>(n_batch, static_cast<uint64_t>(b.n_seq) * n_ctx);
    b.n_ubatch = n_ubatch;
    b.passes = (n_ctx + b.n_batch - 1) / b.n_batch;
    return b;
}

Result<ContextPtr> make_chunk_context(Session& session, const ChunkBatching& layout) {
    const uint32_t n_tokens = layout.n_seq * layout.n_ctx;
    llama_context_params cp = context_params(session, n_tokens);
    cp.n_batch = layout.n_batch;
    cp.n_ubatch = layout.n_ubatch;
    cp.n_seq_max = layout.n_seq;
    const uint64_t first_line = session.log().total();
    LogScope scope(&session.log());
    ContextPtr ctx(llama_init_from_model(session.model(), cp), &llama_free);
    if (!ctx)
        return Error{ErrorCode::E_LLAMA_CONTEXT, "", std::nullopt,
                     with_log(session, first_line, "llama.cpp could not create a context of " + std::to_string(n_tokens) + " tokens")};
    return ctx;
}

ChunkGroupDecoder::ChunkGroupDecoder(Session& session, llama_context* ctx, const ChunkBatching& layout)
    : m_session(session), m_ctx(ctx), m_layout(layout) {}

Status ChunkGroupDecoder::decode(std::span<const int32_t> chunks, uint32_t count, JobContext* job) {
    const uint32_t n_ctx = m_layout.n_ctx, first = kld_first_scored(n_ctx);
    const bool add_bos = m_session.facts().add_bos;
    llama_memory_clear(llama_get_memory(m_ctx), true);
    m_gathered.clear();
    llama_batch batch = llama_batch_init(static_cast<int32_t>(m_layout.n_batch), 0, 1);
    Session::JobBinding binding(m_session, job);
    LogScope scope(&m_session.log());
    for (uint32_t pass = 0; pass < m_layout.passes; ++pass) {
        const uint32_t pos0 = pass * m_layout.n_batch;
        const uint32_t size = std::min(n_ctx - pos0, m_layout.n_batch);
        uint32_t outputs = 0;
        batch.n_tokens = 0;
        for (uint32_t seq = 0; seq < count; ++seq)
            for (uint32_t k = 0; k < size; ++k) {
                const uint32_t pos = pos0 + k;
                const int32_t at = batch.n_tokens++;
                batch.token[at] = pos == 0 && add_bos ? m_session.facts().bos : chunks[static_cast<size_t>(seq) * n_ctx + pos];
                batch.pos[at] = static_cast<int32_t>(pos);
                batch.n_seq_id[at] = 1;
                batch.seq_id[at][0] = static_cast<int32_t>(seq);
                batch.logits[at] = pos >= first ? 1 : 0;
                outputs += pos >= first ? 1 : 0;
            }
        const uint64_t first_line = m_session.log().total();
        const int32_t rc = llama_decode(m_ctx, batch);
        if (rc == 2 || job_cancelled(job)) {
            llama_batch_free(batch);
            return cancelled_error();
        }
        if (rc != 0) {
            llama_batch_free(batch);
            return Error{ErrorCode::E_LLAMA_DECODE, "", std::nullopt,
                         with_log(m_session, first_line, "llama_decode returned " + std::to_string(rc))};
        }
        if (m_layout.passes > 1 && outputs > 0) {
            const float* logits = llama_get_logits(m_ctx);
            const size_t n_vocab = static_cast<size_t>(m_session.facts().n_vocab);
            m_gathered.insert(m_gathered.end(), logits, logits + outputs * n_vocab);
        }
    }
    llama_batch_free(batch);
    if (m_layout.passes == 1 && !llama_get_logits(m_ctx))
        return Error{ErrorCode::E_LLAMA_DECODE, "", std::nullopt, "llama.cpp returned no logits"};
    return ok_status();
}

const float* ChunkGroupDecoder::rows(uint32_t seq) const {
    if (m_layout.passes > 1) return m_gathered.data();
    return llama_get_logits_ith(m_ctx, static_cast<int32_t>(seq * m_layout.n_ctx + kld_first_scored(m_layout.n_ctx)));
}

}  // namespace mlens::infer_detail
