// Helpers shared by the core/infer sources (not part of the public API).
#pragma once

#include <llama.h>

#include <cstdint>
#include <span>
#include <vector>

#include "mlens/infer/session.h"

namespace mlens::infer_detail {

// Context parameters for `session`: CPU, the session's thread count, a batch that holds the
// whole context, and the session's abort callback.
llama_context_params context_params(Session& session, uint32_t n_ctx);

// Decodes `tokens` at positions pos0.. in sequence 0 of `ctx`. Logits are produced for every
// token when all_logits, else for the last one only. Returns ErrorCode::E_CANCELLED when the bound job
// was cancelled, ErrorCode::E_LLAMA_DECODE with llama.cpp's return code and log otherwise.
Status decode(Session& session, llama_context* ctx, std::span<const int32_t> tokens, int32_t pos0, bool all_logits, JobContext* job);

// The logits row `i` of the last decode (llama_get_logits_ith) as a span over the vocab.
std::span<const float> logits_row(Session& session, llama_context* ctx, int32_t i);

}  // namespace mlens::infer_detail
