// Each operation's worker function (operations.h), which runs the in-process API of the same name
// on the worker's model, so the worker gives exactly what that code gives, and the worker's
// handler table of every operation of AllOps.
#include <chrono>

#include "mlens/infer/ab_compare.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/layer_capture.h"
#include "mlens/infer/layer_divergence.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/infer/tokenizer.h"
#include "infer/worker_op_wire.h"
#include "mlens/worker/jinja_chat.h"
#include "worker_ops.h"

namespace mlens {

namespace {

// A generation's steps go out at most every kStepBatch (the first at once): a frame per token
// would wake the client thousands of times a second, and on a machine with as many decoding
// threads as cores each wake-up delays a thread the others wait for.
constexpr auto kStepBatch = std::chrono::milliseconds(20);

// Runs Op on the request's options; its outcome is the "result" frame.
template <typename Op>
Result<wire::Json> serve_request(const wire::Json& request, WorkerCall& call) {
    auto outcome = Op::serve(request.at("options").get<typename Op::Options>(), call);
    if (!outcome) return outcome.error();
    return wire::Json{{"type", "result"}, {"result", std::move(outcome).value()}};
}

template <typename... Ops>
std::map<std::string, OperationHandler, std::less<>> handler_table(OpList<Ops...>) {
    return {{std::string(Ops::name), &serve_request<Ops>}...};
}

}  // namespace

const std::map<std::string, OperationHandler, std::less<>>& operation_handlers() {
    static const auto table = handler_table(AllOps{});
    return table;
}

Result<TokenizeOp::Outcome> TokenizeOp::serve(const Options& options, WorkerCall& call) {
    return tokenize(call.model(), options.text, options.tokenize);
}

Result<PiecesOp::Outcome> PiecesOp::serve(const Options& options, WorkerCall& call) { return token_pieces(call.model(), options.ids); }

Result<DetokenizeOp::Outcome> DetokenizeOp::serve(const Options& options, WorkerCall& call) {
    return detokenize(call.model(), options.ids, options.remove_special, options.unparse_special);
}

Result<ChatTemplateOp::Outcome> ChatTemplateOp::serve(const Options& options, WorkerCall& call) {
    return apply_chat_template(call.model(), options.messages, options.add_assistant_prefix, options.template_text);
}

Result<JinjaChatOp::Outcome> JinjaChatOp::serve(const Options& options, WorkerCall& call) { return render_jinja_chat(call.model(), options); }

Result<GenerateOp::Outcome> GenerateOp::serve(const Options& options, WorkerCall& call) {
    auto prompt = tokenize(call.model(), options.prompt, options.options.tokenize);
    if (!prompt) return prompt.error();
    std::vector<int32_t> ids;
    for (const TokenPiece& t : *prompt) ids.push_back(t.id);
    GenerationStream pending{*prompt, {}};
    call.stream(pending);
    pending.prompt.clear();
    auto last_sent = std::chrono::steady_clock::now();
    auto flush = [&] {
        if (pending.steps.empty()) return;
        call.stream(pending);
        pending.steps.clear();
        last_sent = std::chrono::steady_clock::now();
    };
    auto on_step = [&](const GenerationStep& step) {
        pending.steps.push_back(step);
        if (std::chrono::steady_clock::now() - last_sent >= kStepBatch) flush();
    };
    auto result = generate_from_tokens(call.model(), std::move(ids), options.options, &call.job(), on_step);
    flush();
    if (!result) return result.error();
    return Outcome{std::move(prompt).value(), std::move(result).value()};
}

Result<LayersOp::Outcome> LayersOp::serve(const Options& options, WorkerCall& call) {
    return capture_layers(call.model(), options.prompt, options.options, &call.job());
}

Result<AbOp::Outcome> AbOp::serve(const Options& options, WorkerCall& call) {
    auto b = call.load_model_b();
    if (!b) return b.error();
    Session& a = call.model();
    auto result = compare_ab(a, *b->session, options.prompt, options.options, &call.job());
    if (!result) return result.error();
    Outcome out;
    for (const AbPosition& p : result->positions) {
        auto piece_a = token_piece(a, p.top_a);
        auto piece_b = token_piece(*b->session, p.top_b);
        out.top_a.push_back(piece_a ? piece_a->piece : std::string());
        out.top_b.push_back(piece_b ? piece_b->piece : std::string());
    }
    out.tokens = token_pieces(a, result->tokens);
    out.result = std::move(result).value();
    out.b_model = options.b_model;
    out.b_route = b->route;
    return out;
}

Result<KldOp::Outcome> KldOp::serve(const Options& options, WorkerCall& call) {
    auto on_chunk = [&](const KldChunk& chunk) { call.stream(chunk); };
    Result<CorpusKldResult> result = Error{};
    LoadRoute b_route;
    if (call.has_model_b()) {
        auto b = call.load_model_b();
        if (!b) return b.error();
        b_route = b->route;
        result = corpus_kld(&call.model(), *b->session, options.text, options.options, &call.job(), on_chunk, options.inputs);
    } else {
        result = corpus_kld(nullptr, call.model(), options.text, options.options, &call.job(), on_chunk, options.inputs);
    }
    if (!result) return result.error();
    Outcome out;
    out.result = std::move(result).value();
    out.moments = kld_moments(out.result.total);
    out.kld_order = kld_order(out.result.kld);
    out.p_diff_order = kld_order(out.result.p_diff);
    out.b_model = options.b_model;
    out.text_path = options.text_path;
    out.b_route = std::move(b_route);
    return out;
}

Result<PplOp::Outcome> PplOp::serve(const Options& options, WorkerCall& call) {
    return corpus_perplexity(call.model(), options.text, options.options, &call.job(),
                             [&](const PerplexityChunk& chunk) { call.stream(chunk); });
}

Result<DivergenceOp::Outcome> DivergenceOp::serve(const Options& options, WorkerCall& call) {
    auto b = call.load_model_b();
    if (!b) return b.error();
    auto result = layer_divergence(call.model(), *b->session, options.prompt, options.options, &call.job());
    if (!result) return result.error();
    return Outcome{std::move(result).value(), options.b_model};
}

Result<MemoryOp::Outcome> MemoryOp::serve(const Options& options, WorkerCall& call) { return measure_memory(call.model(), options); }

}  // namespace mlens
