#include "mlens/infer/layer_divergence.h"

#include <ggml-backend.h>
#include <ggml.h>
#include <llama.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>

#include "infer_internal.h"
#include "mlens/infer/ab_compare.h"
#include "mlens/infer/layer_capture.h"

namespace mlens {

namespace {

// Rows of one node: n_tokens rows of width values each, contiguous.
struct NodeValues {
    int64_t width = 0;
    std::vector<float> values;
};

struct FullCapture {
    const std::vector<std::string>* names = nullptr;
    int64_t n_tokens = 0;
    std::map<std::string, NodeValues> nodes;
};

bool wanted(const FullCapture& c, std::string_view name) {
    auto [base, layer] = split_layer_name(name);
    if (layer < 0) return false;
    return std::find(c.names->begin(), c.names->end(), base) != c.names->end();
}

float element(const uint8_t* p, ggml_type type) {
    if (type == GGML_TYPE_F32) {
        float v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    if (type == GGML_TYPE_F16) {
        ggml_fp16_t v;
        std::memcpy(&v, p, sizeof v);
        return ggml_fp16_to_fp32(v);
    }
    ggml_bf16_t v;
    std::memcpy(&v, p, sizeof v);
    return ggml_bf16_to_fp32(v);
}

bool on_eval(ggml_tensor* t, bool ask, void* user_data) {
    auto& c = *static_cast<FullCapture*>(user_data);
    if (ask) return wanted(c, ggml_get_name(t));
    if (!wanted(c, ggml_get_name(t))) return true;
    if (t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16 && t->type != GGML_TYPE_BF16) return true;
    if (t->ne[1] != c.n_tokens || t->ne[2] != 1 || t->ne[3] != 1) return true;
    std::vector<uint8_t> bytes(ggml_nbytes(t));
    ggml_backend_tensor_get(t, bytes.data(), 0, bytes.size());
    NodeValues v;
    v.width = t->ne[0];
    v.values.resize(static_cast<size_t>(t->ne[0] * t->ne[1]));
    for (int64_t row = 0; row < t->ne[1]; ++row)
        for (int64_t i = 0; i < t->ne[0]; ++i)
            v.values[static_cast<size_t>(row * t->ne[0] + i)] = element(bytes.data() + row * t->nb[1] + i * t->nb[0], t->type);
    c.nodes[ggml_get_name(t)] = std::move(v);
    return true;
}

Result<std::map<std::string, NodeValues>> capture(Session& s, const std::vector<int32_t>& tokens, const std::vector<std::string>& names,
                                                  JobContext* job) {
    FullCapture c;
    c.names = &names;
    c.n_tokens = static_cast<int64_t>(tokens.size());
    const auto n = static_cast<uint32_t>(tokens.size());
    llama_context_params cp = infer_detail::context_params(s, (n + 255) / 256 * 256);
    cp.n_ubatch = cp.n_batch;
    cp.cb_eval = on_eval;
    cp.cb_eval_user_data = &c;
    LogScope scope(&s.log());
    Session::JobBinding binding(s, job);
    llama_context* ctx = llama_init_from_model(s.model(), cp);
    if (!ctx) return Error{ErrorCode::E_LLAMA_CONTEXT, "", std::nullopt, "llama.cpp could not create a capture context"};
    Status st = infer_detail::decode(s, ctx, tokens, 0, true, job);
    llama_free(ctx);
    if (!st) return st.error();
    return std::move(c.nodes);
}

struct Sums {
    double aa = 0, bb = 0, ab = 0, dd = 0;
};

double cosine_of(const Sums& s) {
    if (s.aa == 0 && s.bb == 0) return 1.0;
    if (s.aa == 0 || s.bb == 0) return 0.0;
    return s.ab / std::sqrt(s.aa * s.bb);
}
double rel_of(const Sums& s) { return s.aa > 0 ? std::sqrt(s.dd / s.aa) : (s.dd > 0 ? INFINITY : 0.0); }
double sqnr_of(const Sums& s) { return s.dd > 0 ? 10.0 * std::log10(s.aa / s.dd) : INFINITY; }

}  // namespace

Result<LayerDivergenceResult> layer_divergence(Session& a, Session& b, std::string_view prompt, const LayerDivergenceOptions& options,
                                               JobContext* job) {
    if (!a.context()) return vocab_only_error(a);
    if (!b.context()) return vocab_only_error(b);
    Status same = check_same_vocab(a, b);
    if (!same) return same.error();
    auto tokens = tokenize_ids(a, prompt, options.tokenize);
    if (!tokens) return tokens.error();
    if (tokens->empty()) return Error{ErrorCode::E_EMPTY_PROMPT, "", std::nullopt, "the prompt has no tokens"};
    if (tokens->size() > 4096)
        return Error{ErrorCode::E_CONTEXT, "", std::nullopt, "the prompt has " + std::to_string(tokens->size()) + " tokens; at most 4096"};
    auto na = capture(a, *tokens, options.names, job);
    if (!na) return na.error();
    if (na->empty()) {
        std::string names;
        for (const std::string& n : options.names) names += (names.empty() ? "" : ",") + n;
        return Error{ErrorCode::E_USAGE, "names", std::nullopt,
                     "no graph tensor of A matched the names " + names + "; nothing was compared (the default is attn_out,ffn_out,l_out)"};
    }
    job_report(job, 0.5);
    auto nb = capture(b, *tokens, options.names, job);
    if (!nb) return nb.error();

    LayerDivergenceResult r;
    r.tokens = std::move(*tokens);
    const size_t n_tokens = r.tokens.size();
    for (const auto& [name, va] : *na) {
        auto it = nb->find(name);
        if (it == nb->end() || it->second.width != va.width) continue;
        const NodeValues& vb = it->second;
        LayerDivergenceRow row;
        row.tensor = name;
        std::tie(row.base, row.layer) = split_layer_name(name);
        Sums total;
        for (size_t p = 0; p < n_tokens; ++p) {
            Sums s;
            const float* x = va.values.data() + p * static_cast<size_t>(va.width);
            const float* y = vb.values.data() + p * static_cast<size_t>(va.width);
            for (int64_t i = 0; i < va.width; ++i) {
                const double u = x[i], v = y[i], d = u - v;
                s.aa += u * u;
                s.bb += v * v;
                s.ab += u * v;
                s.dd += d * d;
            }
            row.cosine_at.push_back(static_cast<float>(cosine_of(s)));
            row.rel_error_at.push_back(static_cast<float>(rel_of(s)));
            row.sqnr_db_at.push_back(static_cast<float>(sqnr_of(s)));
            total.aa += s.aa;
            total.bb += s.bb;
            total.ab += s.ab;
            total.dd += s.dd;
        }
        row.cosine = cosine_of(total);
        row.rel_error = rel_of(total);
        row.sqnr_db = sqnr_of(total);
        r.rows.push_back(std::move(row));
    }
    if (r.rows.empty())
        return Error{ErrorCode::E_SHAPE, "", std::nullopt,
                     "B has none of the " + std::to_string(na->size()) + " tensors captured in A with the same width; nothing was compared"};
    auto order = [&](const LayerDivergenceRow& x) {
        auto it = std::find(options.names.begin(), options.names.end(), x.base);
        return std::pair{x.layer, it - options.names.begin()};
    };
    std::stable_sort(r.rows.begin(), r.rows.end(), [&](const auto& x, const auto& y) { return order(x) < order(y); });
    double previous = 0, best_rise = 0;
    for (const LayerDivergenceRow& row : r.rows) {
        if (row.base != "l_out") continue;
        const double rise = row.rel_error - previous;
        if (rise > best_rise) {
            best_rise = rise;
            r.jump_layer = row.layer;
        }
        previous = row.rel_error;
    }
    job_report(job, 1.0);
    return r;
}

}  // namespace mlens
