#include "mlens/infer/memory_plan.h"

#include <ggml-backend.h>
#include <ggml.h>
#include <llama.h>

#include <algorithm>
#include <map>

// llama_get_memory_breakdown is exported by libllama but declared in a staging header that is not
// installed; the pinned source's copy declares it with the types it returns.
#include "llama-ext.h"

#include "infer_internal.h"
#include "mlens/infer/model_loader.h"
#include "weight_placement.h"

namespace mlens {

namespace {

std::string join_note(const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + "; " + b; }

Error usage(std::string message) { return Error{ErrorCode::E_USAGE, "", std::nullopt, std::move(message)}; }

Result<ggml_type> cache_type(const std::string& name) {
    static const std::map<std::string, ggml_type> types = {
        {"f32", GGML_TYPE_F32},   {"f16", GGML_TYPE_F16},   {"bf16", GGML_TYPE_BF16}, {"q8_0", GGML_TYPE_Q8_0},    {"q4_0", GGML_TYPE_Q4_0},
        {"q4_1", GGML_TYPE_Q4_1}, {"q5_0", GGML_TYPE_Q5_0}, {"q5_1", GGML_TYPE_Q5_1}, {"iq4_nl", GGML_TYPE_IQ4_NL}};
    auto it = types.find(name);
    if (it == types.end()) return usage("unknown KV cache type '" + name + "' (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl)");
    return it->second;
}

const Value* value_of(const Model& model, const std::string& key) {
    const MetadataEntry* e = model.find(key);
    return e ? &e->value : nullptr;
}

uint64_t uint_of(const Model& model, const std::string& key, uint64_t fallback) {
    const Value* v = value_of(model, key);
    if (!v || v->type == ValueType::array || v->type == ValueType::string) return fallback;
    return v->scalar.as_uint();
}

// A per-layer value: a scalar for every layer, or an array with one entry per layer.
uint64_t layer_value(const Model& model, const std::string& key, uint64_t layer, uint64_t fallback) {
    const Value* v = value_of(model, key);
    if (!v) return fallback;
    if (v->type == ValueType::array && v->array) return layer < v->array->count ? v->array->scalar_at(layer).as_uint() : fallback;
    if (v->type == ValueType::string) return fallback;
    return v->scalar.as_uint();
}

Result<MemoryEstimate> estimate_model(const Model& model, const MemoryPlanOptions& o) {
    auto k_type = cache_type(o.kv_type);
    if (!k_type) return k_type.error();
    if (o.n_ctx < 1 || o.n_ubatch < 1) return usage("the context and the micro-batch must be at least 1 token");
    MemoryEstimate e;
    const Value* arch_value = value_of(model, "general.architecture");
    const std::string arch = arch_value && arch_value->type == ValueType::string ? arch_value->text : std::string();
    if (arch.empty()) return Error{ErrorCode::E_NO_ARCH, "", std::nullopt, "the file names no architecture (general.architecture)"};
    const std::string p = arch + ".";

    const infer_detail::WeightPlacement placement = infer_detail::place_weights(model, arch);
    e.terms.weights = placement.total();
    e.weights_mapped = placement.mapped;
    e.weights_copied = placement.copied;

    e.n_layer = uint_of(model, p + "block_count", 0);
    e.n_embd = uint_of(model, p + "embedding_length", 0);
    e.n_ff = layer_value(model, p + "feed_forward_length", 0, 0);
    const uint64_t n_head = layer_value(model, p + "attention.head_count", 0, 0);
    for (const TensorInfo& t : model.tensors)
        if (t.name == "token_embd.weight" && t.ne.size() >= 2) e.n_vocab = t.ne[1];
    e.n_ctx_padded = (o.n_ctx + 255) / 256 * 256;
    e.n_ubatch = std::min(o.n_ubatch, std::min(o.n_batch, e.n_ctx_padded));
    const uint64_t n_ctx = e.n_ctx_padded;
    for (uint64_t il = 0; il < e.n_layer; ++il) {
        const uint64_t head = layer_value(model, p + "attention.head_count", il, n_head);
        const uint64_t head_dim = head ? e.n_embd / head : 0;
        const uint64_t head_kv = layer_value(model, p + "attention.head_count_kv", il, head);
        const uint64_t k_len = uint_of(model, p + "attention.key_length", head_dim);
        const uint64_t v_len = uint_of(model, p + "attention.value_length", head_dim);
        const uint64_t k = k_len * head_kv, v = v_len * head_kv;
        if (il == 0) {
            e.n_embd_k_gqa = k;
            e.n_embd_v_gqa = v;
        }
        if (k == 0) continue;  // a layer without attention (recurrent, convolution) has no cache
        // llama.cpp refuses a cache type whose blocks straddle heads.
        const auto block = static_cast<uint64_t>(ggml_blck_size(*k_type));
        if (k_len % block != 0 || v_len % block != 0)
            return Error{ErrorCode::E_KV_TYPE, "", std::nullopt,
                         "KV cache type " + o.kv_type + " has blocks of " + std::to_string(block) +
                             " values, which do not divide the head size " + std::to_string(k_len) + " (llama.cpp refuses it)"};
        e.terms.kv += n_ctx * (ggml_row_size(*k_type, static_cast<int64_t>(k)) + ggml_row_size(*k_type, static_cast<int64_t>(v)));
    }
    const uint64_t ub = e.n_ubatch;
    // The allocator reuses memory between graph nodes; the peak is at the output (logits, the
    // output norm's input and result, the positions) or inside a layer, whichever is wider.
    // Inside a layer the graph's inputs are live, each one row per token: the token ids and the
    // embeddings input (1 + n_embd), the positions (4 per token under multi-section RoPE), the K
    // and V cache rows to write (two int64 each) and the output ids (1), plus the attention mask
    // (F16 for flash attention, n_ctx' cells per token). Beside them the layer's working set: FFN
    // gate and up, the hidden state, its norm and the hole the attention output leaves (3·n_embd).
    const uint64_t positions = value_of(model, p + "rope.dimension_sections") ? 4 : 1;
    const uint64_t output_stage = ub * (e.n_vocab + 2 * e.n_embd + 1) * 4;
    const uint64_t mask = e.n_embd_k_gqa ? n_ctx * ub * 2 : 0;
    const uint64_t inputs = ub * (1 + e.n_embd + positions + 2 + 2 + 1) * 4;
    const uint64_t layer_stage = mask + inputs + ub * (3 * e.n_embd + 2 * e.n_ff) * 4;
    e.terms.compute = std::max(output_stage, layer_stage);
    if (value_of(model, p + "ssm.state_size") || value_of(model, p + "shortconv.l_cache") || arch == "clip")
        e.note = "recurrent state and vision towers are not part of this estimate";
    return e;
}

}  // namespace

Result<MemoryEstimate> estimate_memory(const Model& model, const MemoryPlanOptions& o, bool as_is) {
    if (model.format != Format::gguf)
        return Error{ErrorCode::E_NOT_GGUF, "", std::nullopt,
                     std::string("the estimate is of llama.cpp's memory, and llama.cpp loads GGUF files; this is a ") +
                         format_name(model.format) + " model (mlens loads says how to convert it)"};
    if (as_is) return estimate_model(model, o);
    auto upstream = upstream_model_for_load(model);
    if (!upstream) {
        auto stored = estimate_model(model, o);
        if (stored) stored->note = join_note(stored->note, "estimated as stored: the upstream export llama.cpp would be given fails (" +
                                                                upstream.error().message + ")");
        return stored;
    }
    if (!*upstream) return estimate_model(model, o);
    auto exported = estimate_model(**upstream, o);
    if (exported) {
        exported->through_export = true;
        exported->note = join_note("estimated on the upstream export llama.cpp is given, not on the file as stored", exported->note);
    }
    return exported;
}

Result<MemoryMeasure> measure_memory(Session& session, const MemoryPlanOptions& o) {
    auto k_type = cache_type(o.kv_type);
    if (!k_type) return k_type.error();
    if (session.facts().vocab_only && !session.options().dry_run) return vocab_only_error(session);
    llama_context_params cp = infer_detail::context_params(session, o.n_ctx);
    cp.n_batch = o.n_batch;
    cp.n_ubatch = o.n_ubatch;
    cp.type_k = *k_type;
    cp.type_v = *k_type;
    const uint64_t first_line = session.log().total();
    LogScope scope(&session.log());
    llama_context* ctx = llama_init_from_model(session.model(), cp);
    if (!ctx) {
        session.log().flush();
        std::string why = session.log().problems_since(first_line);
        return Error{ErrorCode::E_LLAMA_CONTEXT, "", std::nullopt,
                     "llama.cpp could not create the context" + (why.empty() ? std::string() : ": " + why)};
    }
    MemoryMeasure m;
    m.n_ctx = llama_n_ctx(ctx);
    for (const auto& [buft, data] : llama_get_memory_breakdown(ctx)) {
        MemoryBuffer b{buft ? ggml_backend_buft_name(buft) : "?", MemoryTerms{data.model, data.context, data.compute}};
        m.terms.weights += data.model;
        m.terms.kv += data.context;
        m.terms.compute += data.compute;
        m.buffers.push_back(std::move(b));
    }
    llama_free(ctx);
    return m;
}

}  // namespace mlens
