// The operations a WorkerSession runs in its llama.cpp worker, one descriptor each.
//
// A descriptor names its operation on the wire (`name`), says what the caller gives (`Options`)
// and what comes back (`Outcome`), and declares the function that runs it inside the worker
// (`serve`, defined in core/src/worker/worker_ops.cpp). Optional members:
//  - `title`: what a job running it is called (defaults to name);
//  - `quick`: the call must answer within kQuickCallMs (tokenizer calls);
//  - `Step`: what the worker streams while it runs (delivered to run<Op>'s on_step);
//  - `prepare(Options&, OpClient&)`: client-side work before the request is sent (reading a
//    file the worker gets the text of, naming folders the worker writes to).
// An Options with a `b_model` field names a second model (any text open/target.h resolves): the
// client checks that it is a regular file and the worker loads it beside this model, with errors
// about it starting "model B: " (worker_session.h about_model_b).
// The wire form of Options, Outcome and Step is derived from their fields (worker_wire.h); errors
// travel only as the Result's Error, never inside an Outcome.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/infer/ab_compare.h"
#include "mlens/infer/chat_render.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/corpus_perplexity.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/kld_statistics.h"
#include "mlens/infer/layer_capture.h"
#include "mlens/infer/layer_divergence.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/infer/model_loader.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/result.h"

namespace mlens {

class WorkerCall;  // the worker's side of one request (worker_ops.h)

// What prepare() may do on the client: know the model this session loaded, and name a folder
// the worker is asked to write in (its temporaries there are removed when the worker dies).
struct OpClient {
    std::string model_path;
    std::vector<std::string> write_folders;
};

template <typename... Ops>
struct OpList {};

// What Op streams while it runs (NoStep when it streams nothing), and the callback that gets it.
struct NoStep {};
template <typename Op>
struct StepOf {
    using type = NoStep;
};
template <typename Op>
requires requires { typename Op::Step; }
struct StepOf<Op> {
    using type = typename Op::Step;
};
template <typename Op>
using OnStep = std::function<void(const typename StepOf<Op>::type&)>;

struct TokenizeOp {
    static constexpr std::string_view name = "tokenize";
    static constexpr bool quick = true;
    struct Options {
        std::string text;
        TokenizeOptions tokenize;
    };
    using Outcome = std::vector<TokenPiece>;
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

struct PiecesOp {
    static constexpr std::string_view name = "pieces";
    static constexpr bool quick = true;
    struct Options {
        std::vector<int32_t> ids;
    };
    using Outcome = std::vector<TokenPiece>;
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

struct DetokenizeOp {
    static constexpr std::string_view name = "detokenize";
    static constexpr bool quick = true;
    struct Options {
        std::vector<int32_t> ids;
        bool remove_special = false;
        bool unparse_special = true;
    };
    using Outcome = std::string;
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

struct ChatTemplateOp {
    static constexpr std::string_view name = "chat";
    static constexpr bool quick = true;
    struct Options {
        std::vector<ChatMessage> messages;
        bool add_assistant_prefix = true;
        std::string template_text;  // "" renders the file's template (apply_chat_template)
    };
    using Outcome = ChatRender;
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

// A Jinja chat template rendered by llama.cpp's chat layer as llama-server renders it
// (chat_render.h); "chat" above is the legacy built-in matcher (llama_chat_apply_template).
struct JinjaChatOp {
    static constexpr std::string_view name = "jinja_chat";
    static constexpr std::string_view title = "chat template";
    static constexpr bool quick = true;
    using Options = JinjaChatRequest;
    using Outcome = JinjaRender;
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

// What a generation streams: the prompt's pieces (in the first batch only) and the steps decoded
// since the last batch. append() adds a later batch to what arrived so far.
struct GenerationStream {
    std::vector<TokenPiece> prompt;
    std::vector<GenerationStep> steps;
};
void append(GenerationStream& into, GenerationStream&& batch);

struct GenerateOp {
    static constexpr std::string_view name = "generate";
    struct Options {
        std::string prompt;  // tokenized with options.tokenize
        GenerateOptions options;
    };
    struct Outcome {
        std::vector<TokenPiece> prompt;
        GenerationResult result;
    };
    using Step = GenerationStream;
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

struct LayersOp {
    static constexpr std::string_view name = "layers";
    static constexpr std::string_view title = "layer capture";
    struct Options {
        std::string prompt;
        LayerCaptureOptions options;
    };
    using Outcome = LayerCaptureResult;
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

// A/B with every piece the views show (A's pieces of the tokens and of A's top tokens, B's
// pieces of B's top tokens), so nothing needs B afterwards.
struct AbOp {
    static constexpr std::string_view name = "ab";
    static constexpr std::string_view title = "A/B";
    struct Options {
        std::string b_model;
        std::string prompt;
        AbOptions options;
    };
    struct Outcome {
        AbResult result;
        std::vector<TokenPiece> tokens;  // pieces of result.tokens (model A)
        std::vector<std::string> top_a;  // per position: piece of A's top token
        std::vector<std::string> top_b;  // per position: piece of B's top token (B's vocabulary)
        std::string b_model;  // as Options named it
        LoadRoute b_route;
    };
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

// Corpus KLD (corpus_kld.h). With b_model, this model is A and B is loaded beside it; with an
// empty b_model this model is B and options.base names A's rows. The text is `text`, or read
// from `text_path` on the client when `text` is empty and text_path is not. `inputs` are files
// the base file written by options.save_base must not replace; text_path, both models as named
// and options.base are added to them, so an original loaded through a converted copy and its
// store are protected too. The outcome carries the figures derived from the sums.
struct KldOp {
    static constexpr std::string_view name = "kld";
    static constexpr std::string_view title = "corpus KLD";
    struct Options {
        std::string b_model;
        std::string text;
        std::string text_path;
        KldOptions options;
        std::vector<std::string> inputs;
    };
    struct Outcome {
        CorpusKldResult result;
        KldMoments moments;
        KldOrder kld_order;
        KldOrder p_diff_order;
        std::string b_model;  // as Options named it
        std::string text_path;  // as Options named it
        LoadRoute b_route;  // empty when no B was loaded
    };
    using Step = KldChunk;
    static Status prepare(Options& options, OpClient& client);
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

// Corpus perplexity (corpus_perplexity.h) of this model over `text`, or over the text read from
// `text_path` on the client when `text` is empty and text_path is not.
struct PplOp {
    static constexpr std::string_view name = "ppl";
    static constexpr std::string_view title = "corpus perplexity";
    struct Options {
        std::string text;
        std::string text_path;
        PerplexityOptions options;
    };
    using Outcome = CorpusPerplexityResult;
    using Step = PerplexityChunk;
    static Status prepare(Options& options, OpClient& client);
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

// Layer divergence (layer_divergence.h): this model is A, B is loaded beside it.
struct DivergenceOp {
    static constexpr std::string_view name = "divergence";
    static constexpr std::string_view title = "layer divergence";
    struct Options {
        std::string b_model;
        std::string prompt;
        LayerDivergenceOptions options;
    };
    struct Outcome {
        LayerDivergenceResult result;
        std::string b_model;  // as Options named it
    };
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

// What llama.cpp allocates for a context with these settings (memory_plan.h).
struct MemoryOp {
    static constexpr std::string_view name = "memory";
    using Options = MemoryPlanOptions;
    using Outcome = MemoryMeasure;
    static Result<Outcome> serve(const Options& options, WorkerCall& call);
};

using AllOps = OpList<TokenizeOp, PiecesOp, DetokenizeOp, ChatTemplateOp, JinjaChatOp, GenerateOp, LayersOp, AbOp, KldOp, PplOp, DivergenceOp, MemoryOp>;

// What a job running Op is called.
template <typename Op>
constexpr std::string_view op_title() {
    if constexpr (requires { Op::title; })
        return Op::title;
    else
        return Op::name;
}

}  // namespace mlens
