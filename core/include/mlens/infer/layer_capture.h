// Layer capture: statistics of chosen activations for the last prompt token, through ggml's
// eval callback (llama_context_params.cb_eval).
//
// Contract:
//  - `names` are graph tensor base names as llama.cpp's model graphs call them ("attn_norm",
//    "attn_out", "ffn_inp", "ffn_out", "l_out", "Qcur", ...): a node named "<base>-<layer>"
//    is captured; a name that itself contains "-<digits>" ("l_out-3") or a layer-less name
//    ("result_norm") matches exactly.
//  - The prompt is decoded once on a context of its own (the session's context is untouched)
//    that holds the whole prompt in one micro-batch. Of a captured node, the slice of the last
//    token is taken: the outermost dimension whose size is the prompt's token count; a node
//    whose rows were already reduced to the output token (the last layer) is taken whole.
//    Nodes of another shape are skipped. Only F32/F16/BF16 nodes are read.
//  - Statistics are in double over the slice: L2 norm, min, max, mean, population std.
//    Activations are sorted by layer (layer-less nodes last), then by the order of `names`.
//  - capture_ms is the decode with the callback; plain_ms the same decode without it on the
//    same kind of context, so the cost of capturing is plain_ms vs capture_ms.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"

namespace mlens {

struct LayerCaptureOptions {
    std::vector<std::string> names = {"attn_norm", "attn_out", "ffn_inp", "ffn_out", "l_out"};
    TokenizeOptions tokenize;
    bool keep_values = true;  // keep the slice's values (for a histogram)
    bool measure_plain = true;  // also time a decode without the callback
};

struct ActivationStats {
    std::string tensor;  // graph name, e.g. "l_out-3"
    std::string base;  // e.g. "l_out"
    int32_t layer = -1;  // -1 for layer-less nodes
    std::vector<int64_t> shape;  // ggml ne of the node (4 dims)
    uint64_t count = 0;
    double l2 = 0.0, min = 0.0, max = 0.0, mean = 0.0, std = 0.0;
    std::vector<float> values;
};

struct LayerCaptureResult {
    std::vector<int32_t> tokens;
    std::vector<ActivationStats> activations;
    double capture_ms = 0.0;
    double plain_ms = 0.0;
};

Result<LayerCaptureResult> capture_layers(Session& session, std::string_view prompt, const LayerCaptureOptions& options,
                                          JobContext* job = nullptr);

// Splits "l_out-12" into ("l_out", 12); a name without a numeric suffix gives layer -1.
std::pair<std::string, int32_t> split_layer_name(std::string_view name);

}  // namespace mlens
