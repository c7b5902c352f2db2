#include "mlens/infer/corpus_kld.h"

#include <llama.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "chunk_batches.h"
#include "infer_internal.h"
#include "mlens/infer/ab_compare.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/io/byte_source.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/open/reference_inputs.h"
#include "mlens/util/parallel.h"

namespace mlens {

namespace {

using infer_detail::ChunkBatching;
using infer_detail::ChunkGroupDecoder;

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
constexpr uint64_t kHeaderBytes = 8 + 4 + 4 + 4;
constexpr uint32_t kMaxCtx = infer_detail::kMaxChunkTokens;
// Tokens a base file may hold: they and the per-position results are kept in memory (about 16
// bytes a token; llama-perplexity's usual corpus, wikitext-2, is under 2^19 tokens).
constexpr uint64_t kMaxBaseTokens = 1u << 24;

Error kld_error(ErrorCode code, std::string message) { return Error{code, "", std::nullopt, std::move(message)}; }

// An error about one header field of a base file, at its offset.
Error base_error(std::string field, uint64_t offset, std::string message) {
    return Error{ErrorCode::E_KLD_BASE, std::move(field), offset, std::move(message)};
}

// Where A's rows come from: a file written by llama-perplexity or by us.
class BaseFile {
public:
    static Result<BaseFile> open(const std::string& path, int32_t n_vocab_b) {
        auto src = open_file(path);
        if (!src) return kld_error(src.error().code, path + ": " + src.error().message);
        BaseFile f;
        f.m_source = std::move(*src);
        uint8_t head[kHeaderBytes];
        if (!f.m_source->read(0, kHeaderBytes, head) || std::memcmp(head, kMagic, 8) != 0)
            return base_error("magic", 0, path + ": not a logits file (no \"_logits_\" header)");
        int32_t n_vocab, n_chunk;
        std::memcpy(&f.m_n_ctx, head + 8, 4);
        std::memcpy(&n_vocab, head + 12, 4);
        std::memcpy(&n_chunk, head + 16, 4);
        if (f.m_n_ctx < 4 || f.m_n_ctx > kMaxCtx)
            return base_error("n_ctx", 8, path + ": n_ctx " + std::to_string(f.m_n_ctx) + " is out of range");
        if (n_vocab != n_vocab_b)
            return base_error(
                "n_vocab", 12,
                path + ": made with a vocabulary of " + std::to_string(n_vocab) + " tokens, the model has " + std::to_string(n_vocab_b));
        if (n_chunk < 1) return base_error("n_chunk", 16, path + ": no chunks");
        f.m_n_vocab = n_vocab;
        f.m_n_chunk = n_chunk;
        f.m_row = kld_base_row_size(n_vocab);
        // Every term is below 2^20 · 2^31 · 2^31 / 2^20...: checked in 128 bits to stay exact.
        const unsigned __int128 tokens = static_cast<unsigned __int128>(f.m_n_ctx) * static_cast<uint32_t>(n_chunk);
        const unsigned __int128 rows =
            static_cast<unsigned __int128>(kld_scored_per_chunk(f.m_n_ctx)) * static_cast<uint32_t>(n_chunk) * f.m_row * 2;
        const unsigned __int128 want = kHeaderBytes + tokens * 4 + rows;
        if (want != f.m_source->size())
            return base_error("n_chunk", 16,
                              path + ": " + std::to_string(f.m_source->size()) + " bytes where n_ctx " + std::to_string(f.m_n_ctx) +
                                  ", n_vocab " + std::to_string(n_vocab) + " and " + std::to_string(n_chunk) + " chunks need " +
                                  std::to_string(static_cast<uint64_t>(want)));
        // The file holds its rows (a sparse file may claim any size): the tokens are still bounded.
        if (tokens > kMaxBaseTokens)
            return Error{ErrorCode::E_LIMIT, "n_chunk", 16,
                         path + ": " + std::to_string(n_chunk) + " chunks of " + std::to_string(f.m_n_ctx) + " tokens are " +
                             std::to_string(static_cast<uint64_t>(tokens)) + " tokens, more than the " + std::to_string(kMaxBaseTokens) +
                             " a base file is read with"};
        f.m_tokens.resize(static_cast<size_t>(tokens));
        if (!f.m_source->read(kHeaderBytes, f.m_tokens.size() * 4, f.m_tokens.data()))
            return kld_error(ErrorCode::E_IO, path + ": the tokens could not be read");
        for (size_t i = 0; i < f.m_tokens.size(); ++i)
            if (f.m_tokens[i] < 0 || f.m_tokens[i] >= n_vocab)
                return base_error(
                    "tokens[" + std::to_string(i) + "]", kHeaderBytes + i * 4,
                    path + ": token " + std::to_string(i) + " is " + std::to_string(f.m_tokens[i]) + ", outside the vocabulary");
        return f;
    }

    Status read_chunk(int32_t chunk, std::vector<uint16_t>& rows) const {
        const uint64_t chunk_bytes = rows.size() * 2;
        const uint64_t offset = kHeaderBytes + m_tokens.size() * 4 + static_cast<uint64_t>(chunk) * chunk_bytes;
        if (!m_source->read(offset, chunk_bytes, rows.data()))
            return kld_error(ErrorCode::E_IO, m_source->path() + ": chunk " + std::to_string(chunk) + " could not be read");
        // A row is log p = scale·q + min_log_prob: with either not finite (or a negative scale) it
        // holds no log-probability at all, and every figure scored against it would be NaN.
        for (size_t at = 0, i = 0; at + m_row <= rows.size(); at += m_row, ++i) {
            float scale, min_log_prob;
            std::memcpy(&scale, rows.data() + at, sizeof scale);
            std::memcpy(&min_log_prob, rows.data() + at + 2, sizeof min_log_prob);
            if (!std::isfinite(scale) || !std::isfinite(min_log_prob) || scale < 0)
                return kld_error(ErrorCode::E_KLD_BASE,
                                 m_source->path() + ": chunk " + std::to_string(chunk) + ", row " + std::to_string(i) +
                                     " holds no finite log-probabilities (scale " + std::to_string(scale) + ", min_log_prob " +
                                     std::to_string(min_log_prob) + ")");
        }
        return ok_status();
    }

    uint32_t n_ctx() const { return m_n_ctx; }
    int32_t n_chunk() const { return m_n_chunk; }
    const std::vector<int32_t>& tokens() const { return m_tokens; }

private:
    ByteSourcePtr m_source;
    uint32_t m_n_ctx = 0;
    int32_t m_n_vocab = 0, m_n_chunk = 0;
    size_t m_row = 0;
    std::vector<int32_t> m_tokens;
};

// The sizes one scoring pass works with.
struct ChunkLayout {
    uint32_t n_ctx = 0;
    uint32_t first = 0;  // the first scored position of a chunk
    uint32_t n_scored = 0;  // scored positions per chunk
    size_t row = 0;  // values in one base-file row
    size_t n_vocab = 0;
    unsigned threads = 1;
};

// The evaluated tokens from the text, tokenized by A (infer_detail::corpus_tokens).
Status tokens_from_text(Session& a, Session& b, std::string_view text, const KldOptions& options, CorpusKldResult& r) {
    Status same = check_same_vocab(a, b);
    if (!same) return same.error();
    auto tokens = infer_detail::corpus_tokens(a, text, options.n_ctx, options.max_chunks);
    if (!tokens) return tokens.error();
    r.n_ctx = options.n_ctx;
    r.text_tokens = tokens->text_tokens;
    r.n_chunk = tokens->n_chunk;
    r.tokens = std::move(tokens->tokens);
    return ok_status();
}

// The evaluated tokens from the base file named by options.base, which then gives A's rows.
Result<BaseFile> tokens_from_base(const KldOptions& options, CorpusKldResult& r) {
    auto base = BaseFile::open(options.base, r.n_vocab);
    if (!base) return base.error();
    if (options.n_ctx != 0 && options.n_ctx != base->n_ctx())
        return kld_error(ErrorCode::E_KLD_BASE,
                         options.base + " was computed with a context of " + std::to_string(base->n_ctx()) + " tokens, not " +
                             std::to_string(options.n_ctx));
    r.n_ctx = base->n_ctx();
    r.n_chunk = base->n_chunk();
    if (options.max_chunks >= 0) r.n_chunk = std::min(r.n_chunk, options.max_chunks);
    r.tokens.assign(base->tokens().begin(), base->tokens().begin() + static_cast<ptrdiff_t>(r.n_chunk) * r.n_ctx);
    r.text_tokens = base->tokens().size();
    return base;
}

// The file options.save_base names, with its header and tokens written (none when not asked for).
// It must not replace the models or any of `inputs`.
Result<std::optional<SafeFileWriter>> start_base_file(Session* a, Session& b, const KldOptions& options,
                                                      const std::vector<std::string>& inputs, const CorpusKldResult& r) {
    if (options.save_base.empty()) return std::optional<SafeFileWriter>();
    OutputGuard guard;
    for (const std::string& in : inputs) add_reference_inputs(guard, in);
    if (a) guard.add_input(a->path());
    guard.add_input(b.path());
    auto writer = SafeFileWriter::create(options.save_base, guard);
    if (!writer) return writer.error();
    const int32_t n_vocab = r.n_vocab, n_chunk = r.n_chunk;
    Status st = writer->write(kMagic, 8);
    if (st) st = writer->write(&r.n_ctx, 4);
    if (st) st = writer->write(&n_vocab, 4);
    if (st) st = writer->write(&n_chunk, 4);
    if (st) st = writer->write(r.tokens.data(), r.tokens.size() * 4);
    if (!st) return st.error();
    return std::optional<SafeFileWriter>(std::move(*writer));
}

// A's rows of one chunk from A's logits `la` (ChunkGroupDecoder::rows): its log-probabilities
// quantized as a base file holds them.
Status rows_from_a(const float* la, const int32_t* text_tokens, const ChunkLayout& L, std::vector<uint16_t>& base_rows, JobContext* job) {
    bool finished = parallel_for(L.n_scored, L.threads, [&](uint64_t i) {
        quantize_base_log_probs({la + i * L.n_vocab, L.n_vocab}, {base_rows.data() + i * L.row, L.row}, text_tokens[L.first + i + 1]);
        return !job_cancelled(job);
    });
    if (!finished) return cancelled_error();
    return ok_status();
}

// Each scored position of chunk `c`, B's logits `lb` (ChunkGroupDecoder::rows), compared with
// A's row: the per-position figures go into r, the chunk's sums are returned.
Result<KldChunk> score_chunk(const float* lb, const int32_t* text_tokens, const ChunkLayout& L, const std::vector<uint16_t>& base_rows,
                             int32_t c, CorpusKldResult& r, JobContext* job) {
    KldChunk chunk;
    chunk.index = c;
    const size_t out0 = static_cast<size_t>(c) * L.n_scored;
    // One task per block of positions, each with its own sums, as llama-perplexity's workers; the
    // sums are added in block order, so a run gives the same digits whichever thread was first.
    const uint64_t block = 16;
    const uint64_t n_blocks = (L.n_scored + block - 1) / block;
    std::vector<KldSums> sums(n_blocks);
    bool finished = parallel_for(n_blocks, L.threads, [&](uint64_t blk) {
        KldSums& local = sums[blk];
        const uint64_t end = std::min<uint64_t>(L.n_scored, (blk + 1) * block);
        for (uint64_t i = blk * block; i < end; ++i) {
            KldPoint p =
                score_position({lb + i * L.n_vocab, L.n_vocab}, {base_rows.data() + i * L.row, L.row}, text_tokens[L.first + i + 1], local);
            r.kld[out0 + i] = p.kld;
            r.p_diff[out0 + i] = p.p_diff;
            r.top_a[out0 + i] = p.top_a;
            r.top_b[out0 + i] = p.top_b;
        }
        return !job_cancelled(job);
    });
    if (!finished) return cancelled_error();
    for (const KldSums& local : sums) chunk.sums.add(local);
    return chunk;
}

}  // namespace

Result<CorpusKldResult> corpus_kld(Session* a, Session& b, std::string_view text, const KldOptions& options, JobContext* job,
                                   const KldChunkCallback& on_chunk, const std::vector<std::string>& inputs) {
    if (b.facts().vocab_only || (a && a->facts().vocab_only)) return vocab_only_error(b);
    Status sizes = infer_detail::check_batch_sizes(options.n_batch, options.n_ubatch);
    if (!sizes) return sizes.error();
    CorpusKldResult r;
    r.n_vocab = b.facts().n_vocab;
    std::optional<BaseFile> base;
    if (a) {
        Status tokens = tokens_from_text(*a, b, text, options, r);
        if (!tokens) return tokens.error();
    } else {
        auto opened = tokens_from_base(options, r);
        if (!opened) return opened.error();
        base = std::move(*opened);
    }
    const ChunkLayout L{r.n_ctx,
                        kld_first_scored(r.n_ctx),
                        kld_scored_per_chunk(r.n_ctx),
                        kld_base_row_size(r.n_vocab),
                        static_cast<size_t>(r.n_vocab),
                        static_cast<unsigned>(std::max(1, b.options().n_threads))};
    auto writer = start_base_file(a, b, options, inputs, r);
    if (!writer) return writer.error();

    const ChunkBatching layout = infer_detail::chunk_batching(L.n_ctx, options.n_batch, options.n_ubatch);
    infer_detail::ContextPtr ctx_a(nullptr, &llama_free);
    std::optional<ChunkGroupDecoder> decoder_a;
    if (a) {
        auto c = infer_detail::make_chunk_context(*a, layout);
        if (!c) return c.error();
        ctx_a = std::move(*c);
        decoder_a.emplace(*a, ctx_a.get(), layout);
    }
    auto ctx_b = infer_detail::make_chunk_context(b, layout);
    if (!ctx_b) return ctx_b.error();
    ChunkGroupDecoder decoder_b(b, ctx_b->get(), layout);

    const size_t total_scored = static_cast<size_t>(r.n_chunk) * L.n_scored;
    r.kld.resize(total_scored);
    r.p_diff.resize(total_scored);
    r.top_a.resize(total_scored);
    r.top_b.resize(total_scored);
    std::vector<uint16_t> base_rows(static_cast<size_t>(L.n_scored) * L.row);
    const auto started = std::chrono::steady_clock::now();
    for (int32_t group = 0; group < r.n_chunk; group += static_cast<int32_t>(layout.n_seq)) {
        const auto group_start = std::chrono::steady_clock::now();
        const auto count = static_cast<uint32_t>(std::min<int32_t>(static_cast<int32_t>(layout.n_seq), r.n_chunk - group));
        const std::span<const int32_t> tokens(r.tokens.data() + static_cast<size_t>(group) * L.n_ctx, static_cast<size_t>(count) * L.n_ctx);
        Status decoded = decoder_a ? decoder_a->decode(tokens, count, job) : ok_status();
        if (decoded) decoded = decoder_b.decode(tokens, count, job);
        if (!decoded) return decoded.error();
        const double decode_share = std::chrono::duration<double>(std::chrono::steady_clock::now() - group_start).count() / count;
        for (uint32_t seq = 0; seq < count; ++seq) {
            const auto scoring_start = std::chrono::steady_clock::now();
            const int32_t c = group + static_cast<int32_t>(seq);
            const int32_t* text_tokens = tokens.data() + static_cast<size_t>(seq) * L.n_ctx;
            Status rows = decoder_a ? rows_from_a(decoder_a->rows(seq), text_tokens, L, base_rows, job) : base->read_chunk(c, base_rows);
            if (rows && a && *writer) rows = (*writer)->write(base_rows.data(), base_rows.size() * 2);
            if (!rows) return rows.error();
            auto chunk = score_chunk(decoder_b.rows(seq), text_tokens, L, base_rows, c, r, job);
            if (!chunk) return chunk.error();
            chunk->seconds = decode_share + std::chrono::duration<double>(std::chrono::steady_clock::now() - scoring_start).count();
            r.total.add(chunk->sums);
            r.chunks.push_back(*chunk);
            if (on_chunk) on_chunk(*chunk);
            job_report(job, static_cast<double>(c + 1) / static_cast<double>(r.n_chunk));
        }
    }
    if (*writer) {
        Status st = (*writer)->commit();
        if (!st) return st.error();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
}

}  // namespace mlens
