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

#include <cstdint>
#include <optional>
#include <vector>

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
