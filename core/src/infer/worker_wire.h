// The wire between ModelLens and its llama.cpp worker process (not part of the public API).
//
// A frame is a 4-byte little-endian length followed by that many bytes of CBOR. CBOR rather than
// JSON text because token pieces, llama.cpp's log lines and its error text are raw bytes (a
// byte-fallback piece may be half a UTF-8 sequence): CBOR strings carry them unchanged, and
// float and int32 arrays travel as CBOR byte strings (4 bytes a value). Doubles travel as CBOR
// floats, NaN and infinities included. Frames are written with send(MSG_NOSIGNAL) on a Unix
// socket, so a peer that died gives an error instead of SIGPIPE.
//
// Requests carry "op" (an operation's name, operations.h) and "options" (the wire forms of the
// operations' Options, Outcome and Step are in worker_op_wire.h); an operation with a
// second model also carries "b_path" and "b_identity". Replies carry "type": "log" {level, text}
// and "progress" {fraction} may come at any time, "steps" {steps: [step...]} streams what the
// operation streams, and exactly one final frame ends a request: "error" {code, message} or
// "result" {result}.
//
// The wire form of a struct is derived from its fields: MLENS_WIRE_FIELDS(Type, field...) gives
// it to_json/from_json for wire::Json (a map from field names to values), as nlohmann's
// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE does for nlohmann::json. wire::Json differs from
// nlohmann::json only in how it stores std::vector<float> and std::vector<int32_t>: as byte strings.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "mlens/infer/ab_compare.h"
#include "mlens/infer/chat_render.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/corpus_perplexity.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/kld_statistics.h"
#include "mlens/infer/layer_capture.h"
#include "mlens/infer/layer_divergence.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/infer/model_loader.h"
#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/infer/worker_session.h"
#include "mlens/result.h"

namespace mlens::wire {

// nlohmann's serializer, except that float and int32 arrays are packed into one byte string.
// (Json itself is declared in worker_session.h.)
template <typename T, typename SFINAE = void>
struct Serializer : nlohmann::adl_serializer<T, SFINAE> {};

template <typename V>
struct PackedSerializer {
    static_assert(sizeof(V) == 4);
    template <typename J>
    static void to_json(J& j, const std::vector<V>& values) {
        typename J::binary_t::container_type bytes(values.size() * sizeof(V));
        if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
        j = J::binary(std::move(bytes));
    }
    template <typename J>
    static void from_json(const J& j, std::vector<V>& values) {
        const auto& bytes = j.get_binary();
        values.resize(bytes.size() / sizeof(V));
        if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(V));
    }
};

// Enumerations travel as their underlying integer.
template <typename E>
struct Serializer<E, std::enable_if_t<std::is_enum_v<E>>> {
    template <typename J>
    static void to_json(J& j, E value) {
        j = static_cast<std::underlying_type_t<E>>(value);
    }
    template <typename J>
    static void from_json(const J& j, E& value) {
        value = static_cast<E>(j.template get<std::underlying_type_t<E>>());
    }
};

template <>
struct Serializer<std::vector<float>> : PackedSerializer<float> {};
template <>
struct Serializer<std::vector<int32_t>> : PackedSerializer<int32_t> {};

}  // namespace mlens::wire

// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE for wire::Json; used in the namespace of Type.
#define MLENS_WIRE_FIELDS(Type, ...)                                                           \
    inline void to_json(::mlens::wire::Json& nlohmann_json_j, const Type& nlohmann_json_t) {   \
        NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))               \
    }                                                                                          \
    inline void from_json(const ::mlens::wire::Json& nlohmann_json_j, Type& nlohmann_json_t) { \
        NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM, __VA_ARGS__))             \
    }

namespace mlens::wire {

// Largest frame either side accepts (layer values of a large model fit well below it).
inline constexpr uint32_t kMaxFrameBytes = 512u << 20;
// Deepest nesting of arrays, maps and tags a frame may have (the messages use fewer than 8).
inline constexpr size_t kMaxFrameDepth = 64;

Status write_frame(int fd, const Json& message);

// Frames reassembled from a socket as its bytes arrive, one reader per socket (it keeps what
// arrived of the next frame). Limits are checked before anything is decoded: a length above
// kMaxFrameBytes is refused once its 4 bytes arrived, the body is stored only as far as it has
// arrived (a frame that announces 512 MiB and sends nothing costs nothing), and the CBOR's
// nesting and item counts are walked without recursion before it is decoded.
class FrameReader {
public:
    // Reads what the socket holds, at most 1 MiB (wait: blocks until something arrives;
    // otherwise never blocks). ErrorCode::E_EOF when the peer closed the socket (inside a frame:
    // says so).
    Status receive(int fd, bool wait);
    // The next whole frame, decoded, once it has arrived; nullopt before. ErrorCode::E_WIRE for a
    // length above kMaxFrameBytes, a frame nested deeper than kMaxFrameDepth, one whose container
    // announces more items than it has bytes, or one that is not one CBOR object.
    std::optional<Result<Json>> take();
    // Blocks until a whole frame arrived (take's errors, receive's E_EOF).
    Result<Json> read(int fd);

private:
    std::vector<uint8_t> m_bytes;  // what has arrived from the start of the next frame on
};

Json encode_error(const Error& e);
Error decode_error(const Json& j);

}  // namespace mlens::wire

namespace mlens {

MLENS_WIRE_FIELDS(SessionOptions, vocab_only, n_ctx, n_threads, dry_run, as_is, worker_timeout_s)
MLENS_WIRE_FIELDS(ModelFacts, description, architecture, n_params, size_bytes, n_ctx_train, n_embd, n_layer, n_head, n_head_kv, n_vocab,
                  vocab_type, bos, eos, add_bos, has_chat_template, vocab_only)
MLENS_WIRE_FIELDS(LoadRoute, through_export, handlers, banner)
MLENS_WIRE_FIELDS(FileVersion, device, inode, size, mtime_ns)

MLENS_WIRE_FIELDS(TokenizeOptions, add_special, parse_special)
MLENS_WIRE_FIELDS(TokenPiece, id, piece, control, eog)
MLENS_WIRE_FIELDS(ChatMessage, role, content)
MLENS_WIRE_FIELDS(ChatRender, template_source, prompt, tokens)
MLENS_WIRE_FIELDS(JinjaChatRequest, conversation, template_source, template_text, bos_token, eos_token, add_generation_prompt)
MLENS_WIRE_FIELDS(JinjaRender, prompt, format, capabilities, supports_thinking, thinking_start_tag, thinking_end_tags, generation_prompt,
                  additional_stops, preserved_tokens, has_grammar, grammar_lazy, bos_token, eos_token)

MLENS_WIRE_FIELDS(SamplingParams, temperature, top_k, top_p, seed)
MLENS_WIRE_FIELDS(GenerateOptions, max_tokens, n_candidates, sampling, tokenize, stop_at_eog)
MLENS_WIRE_FIELDS(TokenCandidate, id, piece, logit, prob)
MLENS_WIRE_FIELDS(GenerationStep, token, piece, prob, candidates)
MLENS_WIRE_FIELDS(GenerationResult, prompt_tokens, steps, text, stop, prompt_ms, generation_ms, generation_decoded, prompt_tokens_per_s,
                  generation_tokens_per_s)

MLENS_WIRE_FIELDS(LayerCaptureOptions, names, tokenize, keep_values, measure_plain)
MLENS_WIRE_FIELDS(ActivationStats, tensor, base, layer, shape, count, l2, min, max, mean, std, values)
MLENS_WIRE_FIELDS(LayerCaptureResult, tokens, activations, capture_ms, plain_ms)

MLENS_WIRE_FIELDS(AbOptions, max_tokens, top_k, tokenize)
MLENS_WIRE_FIELDS(AbPosition, index, token, generated, kld, top_a, top_b, prob_top_a, prob_top_b, topk_overlap)
MLENS_WIRE_FIELDS(AbSummary, positions, mean_kld, median_kld, p99_kld, max_kld, same_top_share, mean_topk_overlap, first_divergence)
MLENS_WIRE_FIELDS(AbResult, tokens, n_prompt, positions, summary, continuation)

MLENS_WIRE_FIELDS(KldOptions, n_ctx, max_chunks, n_batch, n_ubatch, save_base, base)
MLENS_WIRE_FIELDS(PerplexityOptions, n_ctx, max_chunks, n_batch, n_ubatch)
MLENS_WIRE_FIELDS(PerplexityChunk, index, running_ppl, nll, seconds)
MLENS_WIRE_FIELDS(CorpusPerplexityResult, n_ctx, n_chunk, text_tokens, count, nll, nll2, ppl, ppl_err, chunks, seconds)
MLENS_WIRE_FIELDS(KldSums, nll, nll2, nll_base, nll_base2, nll_nll_base, kld, kld2, p_diff, p_diff2, p_diff4, max_abs_p_diff, same_top,
                  count)
MLENS_WIRE_FIELDS(KldChunk, index, sums, seconds)
MLENS_WIRE_FIELDS(CorpusKldResult, n_ctx, n_chunk, n_vocab, text_tokens, tokens, kld, p_diff, top_a, top_b, chunks, total, seconds)
MLENS_WIRE_FIELDS(KldMoments, count, ppl_a, ppl_a_err, ppl_b, ppl_b_err, ln_ratio, ln_ratio_err, ppl_correlation, kld_mean, kld_err,
                  p_diff_mean, p_diff_err, p_diff_rms, p_diff_rms_err, same_top, same_top_err, same_top_count)
MLENS_WIRE_FIELDS(KldOrder, min, p01, p1, p5, p10, p25, median, p75, p90, p95, p99, p999, max)

MLENS_WIRE_FIELDS(MemoryPlanOptions, n_ctx, n_batch, n_ubatch, kv_type)
MLENS_WIRE_FIELDS(MemoryTerms, weights, kv, compute)
MLENS_WIRE_FIELDS(MemoryBuffer, name, terms)
MLENS_WIRE_FIELDS(MemoryMeasure, terms, buffers, n_ctx)

MLENS_WIRE_FIELDS(LayerDivergenceOptions, names, tokenize)
MLENS_WIRE_FIELDS(LayerDivergenceRow, tensor, base, layer, cosine, rel_error, sqnr_db, cosine_at, rel_error_at, sqnr_db_at)
MLENS_WIRE_FIELDS(LayerDivergenceResult, tokens, rows, jump_layer)

}  // namespace mlens
