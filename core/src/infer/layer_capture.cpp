#include "mlens/infer/layer_capture.h"

#include <ggml-backend.h>
#include <ggml.h>
#include <llama.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "infer_internal.h"
#include "mlens/formats/ggml_type_table.h"

namespace mlens {

namespace {

struct CaptureState {
    const LayerCaptureOptions* options = nullptr;
    int64_t n_tokens = 0;
    std::vector<ActivationStats> out;
};

bool wanted(const CaptureState& state, std::string_view name) {
    auto [base, layer] = split_layer_name(name);
    for (const std::string& n : state.options->names)
        if (n == name || (layer >= 0 && n == base)) return true;
    return false;
}

// One value of an F32, F16 or BF16 node.
float element(const uint8_t* p, ggml_type type) {
    switch (ggml_type_row(type)->element) {
        case GgmlElement::f32: {
            float v;
            std::memcpy(&v, p, sizeof v);
            return v;
        }
        case GgmlElement::f16: {
            ggml_fp16_t v;
            std::memcpy(&v, p, sizeof v);
            return ggml_fp16_to_fp32(v);
        }
        default: {
            ggml_bf16_t v;
            std::memcpy(&v, p, sizeof v);
            return ggml_bf16_to_fp32(v);
        }
    }
}

// The dimension that indexes tokens, or -1 when the node is not laid out per token.
int token_dim(const ggml_tensor* t, int64_t n_tokens) {
    for (int d = GGML_MAX_DIMS - 1; d >= 1; --d) {
        if (t->ne[d] == n_tokens) {
            for (int above = d + 1; above < GGML_MAX_DIMS; ++above)
                if (t->ne[above] != 1) return -1;
            return d;
        }
    }
    // Rows already reduced to the single output token (the last layer of most graphs).
    if (t->ne[1] * t->ne[2] * t->ne[3] == 1) return 1;
    return -1;
}

void capture_node(CaptureState& state, ggml_tensor* t) {
    if (t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16 && t->type != GGML_TYPE_BF16) return;
    const int d = token_dim(t, state.n_tokens);
    if (d < 0) return;
    std::vector<uint8_t> bytes(ggml_nbytes(t));
    ggml_backend_tensor_get(t, bytes.data(), 0, bytes.size());

    ActivationStats s;
    s.tensor = ggml_get_name(t);
    std::tie(s.base, s.layer) = split_layer_name(s.tensor);
    s.shape.assign(t->ne, t->ne + GGML_MAX_DIMS);
    int64_t idx[GGML_MAX_DIMS] = {0, 0, 0, 0};
    idx[d] = t->ne[d] - 1;
    double sum = 0.0, sum_sq = 0.0;
    s.min = std::numeric_limits<double>::infinity();
    s.max = -std::numeric_limits<double>::infinity();
    // Walk every element of the slice (dims below d), through the node's strides.
    int64_t count = 1;
    for (int k = 0; k < d; ++k) count *= t->ne[k];
    for (int64_t flat = 0; flat < count; ++flat) {
        int64_t rest = flat;
        size_t offset = static_cast<size_t>(idx[d]) * t->nb[d];
        for (int k = 0; k < d; ++k) {
            offset += static_cast<size_t>(rest % t->ne[k]) * t->nb[k];
            rest /= t->ne[k];
        }
        const double v = element(bytes.data() + offset, t->type);
        sum += v;
        sum_sq += v * v;
        s.min = std::min(s.min, v);
        s.max = std::max(s.max, v);
        if (state.options->keep_values) s.values.push_back(static_cast<float>(v));
    }
    s.count = static_cast<uint64_t>(count);
    if (count > 0) {
        s.mean = sum / static_cast<double>(count);
        s.l2 = std::sqrt(sum_sq);
        s.std = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(count) - s.mean * s.mean));
    }
    // A node evaluated again (another micro-batch) replaces its earlier capture.
    auto same = std::find_if(state.out.begin(), state.out.end(), [&](const auto& o) { return o.tensor == s.tensor; });
    if (same != state.out.end())
        *same = std::move(s);
    else
        state.out.push_back(std::move(s));
}

bool on_eval(ggml_tensor* t, bool ask, void* user_data) {
    auto& state = *static_cast<CaptureState*>(user_data);
    if (ask) return wanted(state, ggml_get_name(t));
    if (wanted(state, ggml_get_name(t))) capture_node(state, t);
    return true;
}

double time_decode(Session& session, llama_context_params cp, std::span<const int32_t> tokens, JobContext* job, Status& status) {
    llama_context* ctx = llama_init_from_model(session.model(), cp);
    if (!ctx) {
        status = Error{ErrorCode::E_LLAMA_CONTEXT, "", std::nullopt, "llama.cpp could not create a capture context"};
        return 0.0;
    }
    auto start = std::chrono::steady_clock::now();
    status = infer_detail::decode(session, ctx, tokens, 0, false, job);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    llama_free(ctx);
    return ms;
}

}  // namespace

std::pair<std::string, int32_t> split_layer_name(std::string_view name) {
    size_t dash = name.rfind('-');
    if (dash == std::string_view::npos || dash + 1 >= name.size() || name.size() - dash > 7) return {std::string(name), -1};
    int32_t layer = 0;
    for (char c : name.substr(dash + 1)) {
        if (c < '0' || c > '9') return {std::string(name), -1};
        layer = layer * 10 + (c - '0');
    }
    return {std::string(name.substr(0, dash)), layer};
}

Result<LayerCaptureResult> capture_layers(Session& session, std::string_view prompt, const LayerCaptureOptions& options, JobContext* job) {
    if (!session.context()) return vocab_only_error(session);
    auto tokens = tokenize_ids(session, prompt, options.tokenize);
    if (!tokens) return tokens.error();
    if (tokens->empty()) return Error{ErrorCode::E_EMPTY_PROMPT, "", std::nullopt, "the prompt has no tokens"};
    if (tokens->size() > session.n_ctx())
        return Error{ErrorCode::E_CONTEXT, "", std::nullopt,
                     "the prompt has " + std::to_string(tokens->size()) + " tokens; the context holds " + std::to_string(session.n_ctx())};
    LogScope scope(&session.log());
    Session::JobBinding binding(session, job);

    LayerCaptureResult result;
    result.tokens = std::move(*tokens);
    CaptureState state;
    state.options = &options;
    state.n_tokens = static_cast<int64_t>(result.tokens.size());

    // A context just large enough for the prompt keeps the one-micro-batch compute buffer small.
    const auto n_tokens = static_cast<uint32_t>(result.tokens.size());
    llama_context_params cp = infer_detail::context_params(session, std::min(session.n_ctx(), (n_tokens + 255) / 256 * 256));
    cp.n_ubatch = cp.n_batch;  // one micro-batch: the token dimension is the whole prompt
    Status status = ok_status();
    if (options.measure_plain) {
        result.plain_ms = time_decode(session, cp, result.tokens, job, status);
        if (!status) return status.error();
    }
    job_report(job, 0.5);
    cp.cb_eval = on_eval;
    cp.cb_eval_user_data = &state;
    result.capture_ms = time_decode(session, cp, result.tokens, job, status);
    if (!status) return status.error();

    auto order = [&](const ActivationStats& s) {
        auto it = std::find(options.names.begin(), options.names.end(), s.base);
        // Layer-less nodes (result_norm) come after every layer.
        const int32_t layer = s.layer < 0 ? std::numeric_limits<int32_t>::max() : s.layer;
        return std::pair{layer, it - options.names.begin()};
    };
    result.activations = std::move(state.out);
    std::stable_sort(result.activations.begin(), result.activations.end(),
                     [&](const auto& x, const auto& y) { return order(x) < order(y); });
    job_report(job, 1.0);
    return result;
}

}  // namespace mlens
