// Memory plan: what running a model in llama.cpp on the CPU costs, estimated from the file alone,
// and what llama.cpp actually allocates for the same settings.
//
// Contract:
//  - estimate_memory reads only our parsed Model (no llama.cpp):
//      weights = where llama.cpp puts the weights (weight_placement.h): the tensors the CPU's
//                extra buffer types take (CPU_REPACK: the matmul weights whose type and rows the
//                linked ggml repacks on this CPU), copied, plus, for every file of a split model,
//                the mapped span from its first to its last other tensor;
//      kv      = n_layer · n_ctx' · (row(type_k, n_embd_k_gqa) + row(type_v, n_embd_v_gqa)), exact:
//                n_ctx' is n_ctx rounded up to a multiple of 256 (llama.cpp's padding),
//                n_embd_k_gqa = key_length (default n_embd / n_head) · head_count_kv of each layer
//                (a per-layer array is summed layer by layer), row() ggml_row_size of the cache type;
//      compute = an estimate of the scheduler's buffer for one micro-batch of
//                ub = min(n_ubatch, n_batch, n_ctx') tokens, the wider of its two peaks, in floats:
//                the output, ub · (n_vocab + 2·n_embd + 1) (logits of every token, the output
//                norm's input and result, the positions), and a layer: the graph's inputs,
//                ub · (n_embd + 6 + positions) (token ids, the embeddings input, the positions —
//                4 per token when the file has {arch}.rope.dimension_sections, llama.cpp's
//                multi-section RoPE, else 1 —, the K and V rows to write as int64, the output ids),
//                the attention mask, n_ctx' · ub halves (flash attention's F16 mask over the whole
//                cache), and the layer's working set, ub · (3·n_embd + 2·n_ff) (FFN gate and up,
//                the hidden state, its norm, and the hole the attention output leaves in ggml's
//                allocator); the attention scores of flash attention never materialize. Measured
//                against the pinned llama.cpp's graph allocation node by node on a gemma3 and a
//                qwen2vl model whose tiny vocabulary makes the layer the peak: exact there; the
//                output peak is exact wherever the vocabulary dominates (32k tokens or more).
//    Architectures other than decoder-only transformers (recurrent state, vision towers) are out
//    of the estimate's scope: it says so in `note`.
//  - Which file is estimated: the one llama.cpp is handed (upstream_model_for_load,
//    model_loader.h): for an Ollama-made GGUF that load_model_session exports, the text side of
//    its upstream export (through_export, said in `note`), unless `as_is`. When that export
//    fails the estimate falls back to the stored file and the note says why. A model that is not
//    a GGUF (safetensors, an Ollama tensor-blob model) is ErrorCode::E_NOT_GGUF: llama.cpp does
//    not load it, and its hyperparameters are not GGUF keys.
//  - measure_memory creates a context on the loaded model with the same settings (CPU, flash
//    attention as llama.cpp decides by default, the session's threads) and returns
//    llama_get_memory_breakdown summed over buffer types: model, context (the KV cache) and
//    compute, plus each buffer type's name and figures.
//  - kv types: "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl" (llama.cpp's
//    --cache-type-k/v set); anything else is ErrorCode::E_USAGE. A type whose block size does not divide the
//    head size is ErrorCode::E_KV_TYPE, as llama.cpp refuses to create that context.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mlens/infer/session.h"
#include "mlens/model/model.h"
#include "mlens/result.h"

namespace mlens {

struct MemoryPlanOptions {
    uint32_t n_ctx = 4096;
    uint32_t n_batch = 2048;
    uint32_t n_ubatch = 512;
    std::string kv_type = "f16";  // both K and V
};

struct MemoryTerms {
    uint64_t weights = 0;
    uint64_t kv = 0;
    uint64_t compute = 0;
    uint64_t total() const { return weights + kv + compute; }
};

struct MemoryEstimate {
    MemoryTerms terms;
    uint32_t n_ctx_padded = 0;
    uint32_t n_ubatch = 0;
    uint64_t n_layer = 0, n_embd = 0, n_ff = 0, n_vocab = 0;
    uint64_t n_embd_k_gqa = 0, n_embd_v_gqa = 0;  // of one layer (the first, for per-layer arrays)
    uint64_t weights_mapped = 0;  // the weights left in the file mappings (the CPU buffer)
    std::map<std::string, uint64_t> weights_copied;  // extra buffer type -> weights copied there
    bool through_export = false;  // estimated on the upstream export of an Ollama-made GGUF
    std::string note;
};

struct MemoryBuffer {
    std::string name;  // ggml's buffer type name ("CPU", "CPU_REPACK", ...)
    MemoryTerms terms;
};

struct MemoryMeasure {
    MemoryTerms terms;
    std::vector<MemoryBuffer> buffers;
    uint32_t n_ctx = 0;  // the context llama.cpp made
};

Result<MemoryEstimate> estimate_memory(const Model& model, const MemoryPlanOptions& options, bool as_is = false);
Result<MemoryMeasure> measure_memory(Session& session, const MemoryPlanOptions& options);

}  // namespace mlens
