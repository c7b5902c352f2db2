// InferenceController: test inference on one document through llama.cpp, without ImGui. It owns
// the document's WorkerSession (llama.cpp in a worker process) and runs every heavy operation on
// it as a JobRunner job; the Inference panel draws what it publishes, and tests drive it headless.
//
// Contract:
//  - One job at a time, because a WorkerSession is used by one thread at a time: every start_*()
//    returns false and does nothing while a job runs, and when what it needs is missing (no
//    session; decoding on a vocab-only session). Tokenizing and the chat template are quick and
//    run on the calling thread, also only while no job runs.
//  - Every job's result is an InferOutcome (the alternative of its kind) or an Error, taken from
//    its JobHandle by poll() (main thread, once per frame): the result or the error replaces the
//    previous one of the same kind. While a generation runs, poll() also moves the steps
//    streamed so far (the StepCallback appends them to a mutex-protected Stream, the one channel
//    a running job writes) into stream().
//  - Loading goes through WorkerSession::load, which refuses a path that is not a regular file or
//    that changed since the controller was made (the document's file as it was opened), then
//    load_model_session in the worker: an Ollama-made GGUF is loaded through the upstream export,
//    and load_banner() says so. A failed load leaves no session and load_error() carries
//    llama.cpp's own error text.
//  - When the worker dies (an assert, SIGBUS, a kill), the call that saw it fails with
//    E_LLAMA_STOPPED; stopped() then holds that error ("llama.cpp stopped: REASON") and the
//    session is dropped until the next load. The document and every other tab are untouched.
//  - A/B, corpus KLD and layer divergence load model B in the same worker (the same way), run and
//    drop B when the job ends. A memory measure makes its own llama.cpp context on the loaded model. Token pieces the views show come with the results, so drawing never
//    waits for the worker.
//  - log() collects every llama.cpp line of this controller's loads (B's included) and calls.
//  - Destruction cancels a running job; the job keeps the WorkerSession alive until it returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "job_runner.h"
#include "mlens/infer/ab_compare.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/layer_capture.h"
#include "mlens/infer/layer_divergence.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/infer/worker_session.h"

namespace mlens {

enum class InferJob { none, load, generate, layers, ab, kld, divergence, memory };
const char* infer_job_name(InferJob kind);

struct TokenizeOutcome {
    std::vector<TokenPiece> tokens;
    std::string round_trip;  // detokenized, control tokens rendered
};

struct GenerateOutcome {
    std::vector<TokenPiece> prompt;
    GenerationResult result;
};

struct AbOutcome {
    AbResult result;
    std::vector<TokenPiece> tokens;  // pieces of result.tokens (model A)
    std::vector<std::string> top_a;  // per position: piece of A's top token
    std::vector<std::string> top_b;  // per position: piece of B's top token (B's vocabulary)
    std::string b_path;
    std::string b_banner;  // non-empty when B went through the upstream export
};

// Corpus KLD of B against this model over a text file, with the figures derived from its sums.
struct KldOutcome {
    CorpusKldResult result;
    KldMoments moments;
    KldOrder kld_order;
    KldOrder p_diff_order;
    std::string b_path;
    std::string text_path;
    std::string b_banner;
};

struct DivergenceOutcome {
    LayerDivergenceResult result;
    std::string b_path;
};

struct LoadOutcome {
    std::shared_ptr<WorkerSession> session;
    std::string banner;
    double load_ms = 0.0;
};

// What a job of each InferJob kind (but none) delivers.
using InferOutcome =
    std::variant<LoadOutcome, GenerateOutcome, LayerCaptureResult, AbOutcome, KldOutcome, DivergenceOutcome, MemoryMeasure>;

class InferenceController {
public:
    explicit InferenceController(std::string path);
    ~InferenceController();
    InferenceController(const InferenceController&) = delete;
    InferenceController& operator=(const InferenceController&) = delete;

    bool start_load(JobRunner& jobs, const SessionOptions& options);
    bool start_generate(JobRunner& jobs, std::string prompt, const GenerateOptions& options);
    bool start_layers(JobRunner& jobs, std::string prompt, const LayerCaptureOptions& options);
    bool start_ab(JobRunner& jobs, std::string b_path, std::string prompt, const AbOptions& options);
    // Reads `text_path` in the job; A is this model, B is loaded beside it.
    bool start_kld(JobRunner& jobs, std::string b_path, std::string text_path, const KldOptions& options);
    bool start_divergence(JobRunner& jobs, std::string b_path, std::string prompt, const LayerDivergenceOptions& options);
    bool start_memory(JobRunner& jobs, const MemoryPlanOptions& options);
    void cancel();
    void poll();

    InferJob running() const { return m_job ? m_running : InferJob::none; }
    // How many jobs of `kind` have published (result or error), so views notice a new result.
    uint64_t published(InferJob kind) const { return m_published[static_cast<size_t>(kind)]; }
    bool busy() const { return static_cast<bool>(m_job); }
    double progress() const;

    // Session state.
    bool loaded() const { return m_session != nullptr; }
    // Changes whenever a load publishes (or drops) a session, so views know to redo their work.
    uint64_t session_serial() const { return m_serial; }
    bool can_decode() const { return m_session && !m_session->facts().vocab_only; }
    // Threads llama.cpp decodes with, and why (empty before a load).
    int threads() const { return m_session ? m_session->threads() : 0; }
    std::string thread_note() const { return m_session ? m_session->thread_note() : std::string(); }
    // Set when the worker died; cleared by the next load.
    const std::optional<Error>& stopped() const { return m_stopped; }
    const ModelFacts* facts() const { return m_session ? &m_session->facts() : nullptr; }
    uint32_t n_ctx() const { return m_session ? m_session->n_ctx() : 0; }
    double load_ms() const { return m_load_ms; }
    const std::string& load_banner() const { return m_banner; }
    const std::optional<Error>& load_error() const { return m_load_error; }
    const std::string& path() const { return m_path; }
    LogCapture& log() const { return *m_log; }

    // Main-thread tokenizer calls (refused with E_BUSY while a job runs, E_NOT_LOADED without a session).
    Result<TokenizeOutcome> tokenize(std::string_view text, const TokenizeOptions& options) const;
    Result<ChatRender> chat_template() const;
    // Pieces of token ids (same refusals as tokenize).
    Result<std::vector<TokenPiece>> pieces(std::span<const int32_t> ids) const;

    // Generation: the steps streamed so far (the finished run's steps once it ended).
    const std::vector<GenerationStep>& stream() const { return m_stream; }
    const std::vector<TokenPiece>& stream_prompt() const { return m_stream_prompt; }
    int stream_target() const { return m_stream_target; }
    const std::optional<GenerateOutcome>& generation() const { return m_generation; }
    const std::optional<Error>& generation_error() const { return m_generation_error; }

    const std::optional<LayerCaptureResult>& layers() const { return m_layers; }
    const std::optional<Error>& layers_error() const { return m_layers_error; }

    const std::optional<AbOutcome>& ab() const { return m_ab; }
    const std::optional<Error>& ab_error() const { return m_ab_error; }

    const std::optional<KldOutcome>& kld() const { return m_kld; }
    const std::optional<Error>& kld_error() const { return m_kld_error; }
    const std::optional<DivergenceOutcome>& divergence() const { return m_divergence; }
    const std::optional<Error>& divergence_error() const { return m_divergence_error; }
    const std::optional<MemoryMeasure>& memory() const { return m_memory; }
    const std::optional<Error>& memory_error() const { return m_memory_error; }

private:
    struct Stream;  // the prompt and steps a running generation has produced so far

    Error refusal() const;
    bool begin(InferJob kind);
    // Clears the last outcome and error of `kind` (a job of that kind starts).
    void forget(InferJob kind);
    // Starts `work(WorkerSession&, JobContext&) -> Result<T>`, T the InferOutcome alternative of
    // `kind`, on the loaded session as the one job; false when it cannot run (see the contract).
    template <typename Work>
    bool start_decoding(JobRunner& jobs, InferJob kind, const char* name, Work work);
    // Moves a dead worker's error into stopped() and drops the session.
    void note_stop(const std::optional<Error>& error);

    std::string m_path;
    std::shared_ptr<LogCapture> m_log;
    std::optional<FileVersion> m_identity;  // the file when this controller was made
    std::shared_ptr<WorkerSession> m_session;
    std::optional<Error> m_stopped;
    std::string m_banner;
    std::optional<Error> m_load_error;
    double m_load_ms = 0.0;
    uint64_t m_serial = 0;
    uint64_t m_published[8] = {};

    JobHandle<InferOutcome> m_job;
    InferJob m_running = InferJob::none;
    std::shared_ptr<Stream> m_streaming;  // set while a generation runs

    std::vector<GenerationStep> m_stream;
    std::vector<TokenPiece> m_stream_prompt;
    int m_stream_target = 0;
    std::optional<GenerateOutcome> m_generation;
    std::optional<Error> m_generation_error;
    std::optional<LayerCaptureResult> m_layers;
    std::optional<Error> m_layers_error;
    std::optional<AbOutcome> m_ab;
    std::optional<Error> m_ab_error;
    std::optional<KldOutcome> m_kld;
    std::optional<Error> m_kld_error;
    std::optional<DivergenceOutcome> m_divergence;
    std::optional<Error> m_divergence_error;
    std::optional<MemoryMeasure> m_memory;
    std::optional<Error> m_memory_error;
};

}  // namespace mlens
