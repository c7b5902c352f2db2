// core/infer A/B comparison, distribution helpers and layer capture on the demo models.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "build_paths.h"
#include "mlens/infer/ab_compare.h"
#include "mlens/infer/distribution.h"
#include "mlens/infer/layer_capture.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

std::unique_ptr<Session> load(const std::string& path, bool vocab_only = false) {
    SessionOptions o;
    o.n_threads = 2;
    o.n_ctx = 256;
    o.vocab_only = vocab_only;
    auto s = Session::load(path, o);
    REQUIRE(s.ok());
    return std::move(s).value();
}

const char* const kPrompt = "The quick brown fox jumps over the lazy dog";

AbResult ab(const char* a, const char* b) {
    auto sa = load(demo(a));
    auto sb = load(demo(b));
    AbOptions options;
    options.max_tokens = 6;
    auto r = compare_ab(*sa, *sb, kPrompt, options);
    REQUIRE(r.ok());
    return std::move(r).value();
}

}  // namespace

TEST_CASE("softmax, top-k, KL divergence and percentiles", "[infer]") {
    const float logits[] = {0.0f, 0.0f};
    const float skewed[] = {0.0f, static_cast<float>(std::log(3.0))};
    auto p = log_softmax(logits);
    auto q = log_softmax(skewed);
    CHECK(std::exp(p[0]) == Approx(0.5).epsilon(1e-12));
    CHECK(std::exp(q[1]) == Approx(0.75).epsilon(1e-7));
    CHECK(kl_divergence(p, q) == Approx(0.5 * std::log(4.0 / 3.0)).epsilon(1e-7));
    CHECK(kl_divergence(p, p) == 0.0);

    const float masked[] = {1.0f, -INFINITY, 2.0f, 2.0f};
    auto m = log_softmax(masked);
    CHECK(std::isinf(m[1]));
    CHECK(top_k(masked, 3) == std::vector<int32_t>{2, 3, 0});
    CHECK(argmax(masked) == 2);
    const float zero_q[] = {0.0f, -INFINITY};
    CHECK(std::isinf(kl_divergence(log_softmax(logits), log_softmax(zero_q))));

    CHECK(percentile({4, 1, 3, 2}, 50.0) == 2.5);
    std::vector<double> hundred;
    for (int i = 0; i < 100; ++i) hundred.push_back(i);
    CHECK(percentile(hundred, 99.0) == Approx(98.01));
    CHECK(percentile({}, 50.0) == 0.0);

    std::vector<AbPosition> pos(4);
    for (int i = 0; i < 4; ++i) {
        pos[i].index = i;
        pos[i].kld = i * 0.1;
        pos[i].top_a = 7;
        pos[i].top_b = i == 2 ? 8 : 7;
        pos[i].topk_overlap = i == 2 ? 0.5 : 1.0;
    }
    AbSummary s = summarize_ab(pos);
    CHECK(s.positions == 4);
    CHECK(s.mean_kld == Approx(0.15));
    CHECK(s.median_kld == Approx(0.15));
    CHECK(s.p99_kld == Approx(0.297));
    CHECK(s.max_kld == Approx(0.3));
    CHECK(s.same_top_share == 0.75);
    CHECK(s.mean_topk_overlap == 0.875);
    CHECK(s.first_divergence == 2);
}

TEST_CASE("A/B of a model with itself gives KLD 0 and full agreement", "[infer]") {
    AbResult r = ab("tiny-llama-f32.gguf", "tiny-llama-f32.gguf");
    CHECK(r.n_prompt == 12);
    CHECK(r.tokens.size() == 12 + 6);
    REQUIRE(r.positions.size() == 12 + 5);
    for (const AbPosition& p : r.positions) {
        CHECK(p.kld == 0.0);
        CHECK(p.top_a == p.top_b);
        CHECK(p.topk_overlap == 1.0);
        CHECK(p.generated == (p.index >= 12));
        CHECK(p.token == r.tokens[static_cast<size_t>(p.index)]);
    }
    // A's continuation is its own greedy choice at each position.
    for (size_t i = r.n_prompt; i < r.tokens.size(); ++i) CHECK(r.tokens[i] == r.positions[i - 1].top_a);
    CHECK(r.summary.mean_kld == 0.0);
    CHECK(r.summary.max_kld == 0.0);
    CHECK(r.summary.same_top_share == 1.0);
    CHECK(r.summary.first_divergence == -1);
}

TEST_CASE("A/B against quantized files: small positive KLD, larger for Q4_0", "[infer]") {
    AbResult q8 = ab("tiny-llama-f32.gguf", "tiny-llama-q8_0.gguf");
    AbResult q4 = ab("tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf");
    WARN("Q8_0 KLD mean " << q8.summary.mean_kld << " median " << q8.summary.median_kld << " p99 " << q8.summary.p99_kld << " max "
                          << q8.summary.max_kld << " same top " << q8.summary.same_top_share);
    WARN("Q4_0 KLD mean " << q4.summary.mean_kld << " median " << q4.summary.median_kld << " p99 " << q4.summary.p99_kld << " max "
                          << q4.summary.max_kld << " same top " << q4.summary.same_top_share);
    CHECK(q8.tokens.size() == 18);
    CHECK(q8.summary.mean_kld > 0.0);
    CHECK(q8.summary.mean_kld < 0.01);
    CHECK(q4.summary.mean_kld > 0.0);
    CHECK(q4.summary.mean_kld < 0.5);
    CHECK(q4.summary.mean_kld > 4.0 * q8.summary.mean_kld);
    CHECK(q4.summary.max_kld > q8.summary.max_kld);
    for (const AbPosition& p : q8.positions) CHECK(p.kld > 0.0);
}

TEST_CASE("A/B needs the same vocabulary", "[infer]") {
    auto spm = load(test::llama_source_dir() + "/models/ggml-vocab-llama-spm.gguf", true);
    auto qwen = load(test::llama_source_dir() + "/models/ggml-vocab-qwen2.gguf", true);
    auto demo_model = load(demo("tiny-llama-q8_0.gguf"));
    CHECK(check_same_vocab(*spm, *demo_model).ok());
    Status mismatch = check_same_vocab(*spm, *qwen);
    REQUIRE_FALSE(mismatch.ok());
    CHECK(mismatch.error().code == ErrorCode::E_VOCAB_MISMATCH);
    CHECK(mismatch.error().message == "the models have different vocabularies: 32000 vs 151936 tokens");
    auto itself = compare_ab(*demo_model, *demo_model, "Hi", {});
    REQUIRE_FALSE(itself.ok());
    CHECK(itself.error().code == ErrorCode::E_SAME_SESSION);
    auto refused = compare_ab(*demo_model, *spm, "Hi", {});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::E_VOCAB_ONLY);
}

TEST_CASE("layer capture gives per-layer statistics of the last prompt token", "[infer]") {
    auto session = load(demo("tiny-llama-f32.gguf"));
    LayerCaptureOptions options;
    options.names = {"attn_norm", "ffn_inp", "ffn_out", "l_out"};
    auto r = capture_layers(*session, kPrompt, options);
    REQUIRE(r.ok());
    CHECK(r->tokens.size() == 12);
    REQUIRE(r->activations.size() == 8);
    const char* expected[] = {"attn_norm-0", "ffn_inp-0", "ffn_out-0", "l_out-0", "attn_norm-1", "ffn_inp-1", "ffn_out-1", "l_out-1"};
    for (size_t i = 0; i < 8; ++i) {
        const ActivationStats& s = r->activations[i];
        INFO(s.tensor);
        CHECK(s.tensor == expected[i]);
        CHECK(s.layer == static_cast<int32_t>(i / 4));
        CHECK(s.count == 64);
        REQUIRE(s.values.size() == 64);
        double sum = 0, sq = 0, lo = s.values[0], hi = s.values[0];
        for (float v : s.values) {
            sum += v;
            sq += double(v) * v;
            lo = std::min(lo, double(v));
            hi = std::max(hi, double(v));
        }
        CHECK(s.mean == Approx(sum / 64));
        CHECK(s.l2 == Approx(std::sqrt(sq)));
        CHECK(s.min == lo);
        CHECK(s.max == hi);
        CHECK(s.std == Approx(std::sqrt(sq / 64 - (sum / 64) * (sum / 64))));
        CHECK(s.l2 > 0.0);
    }
    // The residual stream: l_out = ffn_inp + ffn_out, in both layers (the last one is reduced to
    // the output row by llama.cpp and must still be the last token).
    for (size_t layer = 0; layer < 2; ++layer) {
        const auto& inp = r->activations[layer * 4 + 1].values;
        const auto& out = r->activations[layer * 4 + 2].values;
        const auto& l = r->activations[layer * 4 + 3].values;
        for (size_t k = 0; k < 64; ++k) CHECK(l[k] == Approx(inp[k] + out[k]).margin(1e-5));
    }
    // The next layer's input is this layer's output: attn_norm-1 is RMS-normalised l_out-0 times
    // the norm weights, so it is zero exactly where l_out-0 is and has the same sign pattern
    // up to the (positive, ~1) weights.
    const auto& l0 = r->activations[3].values;
    const auto& n1 = r->activations[4].values;
    for (size_t k = 0; k < 64; ++k) CHECK((l0[k] > 0) == (n1[k] > 0));
    CHECK(r->capture_ms > 0.0);
    CHECK(r->plain_ms > 0.0);

    LayerCaptureOptions exact;
    exact.names = {"l_out-1", "result_norm"};
    auto one = capture_layers(*session, "Hello", exact);
    REQUIRE(one.ok());
    REQUIRE(one->activations.size() == 2);
    CHECK(one->activations[0].tensor == "l_out-1");
    CHECK(one->activations[1].tensor == "result_norm");
    CHECK(one->activations[1].layer == -1);
    CHECK(split_layer_name("ffn_out-12") == std::pair<std::string, int32_t>{"ffn_out", 12});
    CHECK(split_layer_name("result_norm") == std::pair<std::string, int32_t>{"result_norm", -1});
    CHECK(split_layer_name("a-b") == std::pair<std::string, int32_t>{"a-b", -1});
}

TEST_CASE("top-k's one-pass path equals a full sort - log_sum_exp gives log_softmax's probabilities", "[infer]") {
    std::vector<float> logits(5000);
    uint32_t state = 12345;
    for (float& v : logits) {
        state = state * 1664525u + 1013904223u;
        v = static_cast<float>(state >> 24) / 16.0f;  // 256 levels: many ties
    }
    logits[17] = std::numeric_limits<float>::quiet_NaN();
    logits[42] = std::numeric_limits<float>::infinity();
    for (int k : {1, 5, 40}) {
        std::vector<int32_t> ids(logits.size());
        std::iota(ids.begin(), ids.end(), 0);
        auto value = [&](int32_t id) { return std::isnan(logits[id]) ? -std::numeric_limits<float>::infinity() : logits[id]; };
        std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return value(a) > value(b); });
        ids.resize(static_cast<size_t>(k));
        CHECK(top_k(logits, k) == ids);
    }
    logits[42] = 3.0f;
    const std::vector<double> logp = log_softmax(logits);
    const double lse = log_sum_exp(logits);
    for (size_t i : {0u, 42u, 4999u}) CHECK(std::exp(static_cast<double>(logits[i]) - lse) == Approx(std::exp(logp[i])).epsilon(1e-5));
    CHECK(std::isinf(log_sum_exp(std::vector<float>(3, std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("log_sum_exp's vector exponential matches a double-precision sum", "[infer]") {
    // Logits from -120 to +30 (terms down to e^-150, below float's range), a vocabulary-sized
    // row with a masked token and an infinite one.
    std::vector<float> logits(150001);
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = -120.0f + 150.0f * static_cast<float>(i) / 150000.0f;
    logits[7] = -std::numeric_limits<float>::infinity();
    logits[8] = std::numeric_limits<float>::infinity();
    logits[9] = std::numeric_limits<float>::quiet_NaN();
    double max_logit = -INFINITY;
    for (float v : logits)
        if (std::isfinite(v)) max_logit = std::max<double>(max_logit, v);
    double sum = 0;
    for (float v : logits)
        if (std::isfinite(v)) sum += std::exp(static_cast<double>(v) - max_logit);
    CHECK(log_sum_exp(logits) == Approx(std::log(sum) + max_logit).epsilon(1e-7));
    for (float shift : {0.0f, -87.5f, 1e-3f}) {
        const std::vector<float> row = {shift, shift - 0.25f, shift - 40.0f, shift - 86.9f, shift - 200.0f};
        double expected = 0;
        for (float v : row) expected += std::exp(static_cast<double>(v) - shift);
        CHECK(std::exp(log_sum_exp(row) - shift) == Approx(expected).epsilon(3e-7));
    }
}
