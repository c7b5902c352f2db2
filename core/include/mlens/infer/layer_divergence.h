// Layer divergence: where B's activations leave A's, layer by layer and position by position.
//
// Contract:
//  - Both models must share the vocabulary (check_same_vocab); the prompt is tokenized by A and the
//    same tokens are decoded by each model on a context of its own, in one micro-batch, with every
//    position an output (so the last layer keeps every row), the session's threads.
//  - Captured nodes are the graph tensors "<name>-<layer>" for `names` (default attn_out, ffn_out,
//    l_out) of shape [n_embd, n_tokens] in F32/F16/BF16; a node missing or shaped differently in
//    B is skipped. Names that match no node of A are ErrorCode::E_USAGE (field "names"); nodes
//    of A of which B has none in the same shape are ErrorCode::E_SHAPE: an empty comparison is
//    never reported as agreement. A model compared with itself decodes the same bits: every figure is exact.
//  - Per node and position, with a = A's row and b = B's: cosine a·b/(|a||b|) (1 when both are
//    zero), relative error |a−b|/|a| and SQNR 10·log10(|a|²/|a−b|²) dB (+inf when equal). Pooled
//    over positions the same from the summed squares and products.
//  - jump_layer: among the l_out rows in layer order, the layer whose pooled relative error rises
//    most over the previous layer's (layer 0 against 0); -1 when every relative error is 0.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"

namespace mlens {

struct LayerDivergenceOptions {
    std::vector<std::string> names = {"attn_out", "ffn_out", "l_out"};
    TokenizeOptions tokenize;
};

struct LayerDivergenceRow {
    std::string tensor;  // "l_out-3"
    std::string base;  // "l_out"
    int32_t layer = -1;
    double cosine = 1, rel_error = 0, sqnr_db = 0;  // pooled over positions
    std::vector<float> cosine_at, rel_error_at, sqnr_db_at;
};

struct LayerDivergenceResult {
    std::vector<int32_t> tokens;
    std::vector<LayerDivergenceRow> rows;  // by layer, then in the order of names
    int32_t jump_layer = -1;
};

Result<LayerDivergenceResult> layer_divergence(Session& a, Session& b, std::string_view prompt, const LayerDivergenceOptions& options,
                                               JobContext* job = nullptr);

}  // namespace mlens
