// The wire between ModelLens and its llama.cpp worker process (not part of the public API).
//
// A frame is a 4-byte little-endian length followed by that many bytes of CBOR. CBOR rather than
// JSON text because token pieces, llama.cpp's log lines and its error text are raw bytes (a
// byte-fallback piece may be half a UTF-8 sequence): CBOR strings carry them unchanged, and
// float arrays travel as CBOR byte strings. Frames are written with send(MSG_NOSIGNAL) on a
// Unix socket, so a peer that died gives an error instead of SIGPIPE.
//
// Requests carry "op"; replies carry "type": "log" {level, text} and "progress" {fraction} may
// come at any time, "steps" {steps: [step...]} streams a generation (steps batched, see
// llama_worker.cpp), and exactly one final frame ends a request: "error" {code, message} or the
// op's result.
#pragma once

#include <nlohmann/json.hpp>

#include "mlens/infer/ab_compare.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/layer_capture.h"
#include "mlens/infer/layer_divergence.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/infer/model_loader.h"
#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/result.h"

namespace mlens::wire {

using Json = nlohmann::json;

// Largest frame either side accepts (layer values of a large model fit well below it).
inline constexpr uint32_t kMaxFrameBytes = 512u << 20;

Status write_frame(int fd, const Json& message);
// Blocks until a whole frame arrived. ErrorCode::E_EOF when the peer closed the socket before a frame
// began or in the middle of one, ErrorCode::E_WIRE for a frame that is not CBOR or too large.
Result<Json> read_frame(int fd);

Json encode_error(const Error& e);
Error decode_error(const Json& j);

Json encode_session_options(const SessionOptions& o);
SessionOptions decode_session_options(const Json& j);
Json encode_facts(const ModelFacts& f);
ModelFacts decode_facts(const Json& j);
Json encode_route(const LoadRoute& r);
LoadRoute decode_route(const Json& j);

Json encode_tokenize_options(const TokenizeOptions& o);
TokenizeOptions decode_tokenize_options(const Json& j);
Json encode_pieces(const std::vector<TokenPiece>& pieces);
std::vector<TokenPiece> decode_pieces(const Json& j);
Json encode_chat(const ChatRender& c);
ChatRender decode_chat(const Json& j);
Json encode_messages(const std::vector<ChatMessage>& messages);
std::vector<ChatMessage> decode_messages(const Json& j);

Json encode_generate_options(const GenerateOptions& o);
GenerateOptions decode_generate_options(const Json& j);
Json encode_step(const GenerationStep& s);
GenerationStep decode_step(const Json& j);
Json encode_generation(const GenerationResult& r);
GenerationResult decode_generation(const Json& j);

Json encode_layer_options(const LayerCaptureOptions& o);
LayerCaptureOptions decode_layer_options(const Json& j);
Json encode_layers(const LayerCaptureResult& r);
LayerCaptureResult decode_layers(const Json& j);

Json encode_ab_options(const AbOptions& o);
AbOptions decode_ab_options(const Json& j);
Json encode_ab(const AbResult& r);
AbResult decode_ab(const Json& j);

// worker_wire_kld.cpp: per-position arrays travel as byte strings (4 bytes a value).
Json encode_kld_options(const KldOptions& o);
KldOptions decode_kld_options(const Json& j);
Json encode_kld_chunk(const KldChunk& c);
KldChunk decode_kld_chunk(const Json& j);
Json encode_kld(const CorpusKldResult& r);
CorpusKldResult decode_kld(const Json& j);
Json encode_memory_options(const MemoryPlanOptions& o);
MemoryPlanOptions decode_memory_options(const Json& j);
Json encode_memory(const MemoryMeasure& m);
MemoryMeasure decode_memory(const Json& j);
Json encode_divergence_options(const LayerDivergenceOptions& o);
LayerDivergenceOptions decode_divergence_options(const Json& j);
Json encode_divergence(const LayerDivergenceResult& r);
LayerDivergenceResult decode_divergence(const Json& j);

}  // namespace mlens::wire
