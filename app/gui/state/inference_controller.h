// InferenceController: test inference on one document through llama.cpp, without ImGui. It owns
// the document's WorkerSession (llama.cpp in a worker process) and runs every heavy operation on
// it as a JobRunner job; the Inference panel draws what it publishes, and tests drive it headless.
//
// Contract:
//  - One job at a time, because a WorkerSession is used by one thread at a time: start_load() and
//    start<Op>() return false and do nothing while a job runs, and start<Op>() also when what it
//    needs is missing (no session; decoding on a vocab-only session; an empty b_model).
//    Tokenizing and the chat template are quick and run on the calling thread, also only while
//    no job runs.
//  - start<Op>(jobs, options) runs WorkerSession::run<Op> (operations.h) as the one job; poll()
//    (main thread, once per frame) takes its Result, which replaces latest<Op>() and counts in
//    published<Op>() (so views notice a new result). While an Op with an appendable Step runs
//    (a generation), poll() also appends what it streamed so far (the step callback hands it to
//    a mutex-protected buffer, the one channel a running job writes) to stream<Op>(), which
//    keeps it after the job ends, cancelled or not.
//  - Loading goes through WorkerSession::load, which refuses a path that is not a regular file or
//    that changed since the controller was made (the document's file as it was opened), then
//    load_model_session in the worker: an Ollama-made GGUF is loaded through the upstream export,
//    and load_banner() says so. A failed load leaves no session and load_error() carries
//    llama.cpp's own error text.
//  - When the worker dies (an assert, SIGBUS, a kill), the call that saw it fails with
//    E_LLAMA_STOPPED; stopped() then holds that error ("llama.cpp stopped: REASON") and the
//    session is dropped until the next load. The document and every other tab are untouched.
//  - An Op with a b_model loads model B in the same worker (the same way), runs and drops B when
//    the job ends. Token pieces the views show come with the results, so drawing never waits for
//    the worker.
//  - log() collects every llama.cpp line of this controller's loads (B's included) and calls.
//  - Destruction cancels a running job; the job keeps the WorkerSession alive until it returns.
#pragma once

#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "job_runner.h"
#include "mlens/infer/operations.h"
#include "mlens/infer/session.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/infer/worker_session.h"

namespace mlens {

struct TokenizeOutcome {
    std::vector<TokenPiece> tokens;
    std::string round_trip;  // detokenized, control tokens rendered
};

// What an Op streams, as stream<Op>() keeps it: its Step when steps append to one another
// (append(Step&, Step&&), operations.h), NoStep otherwise.
template <typename Op>
struct StreamOf {
    using type = NoStep;
};
template <typename Op>
requires requires(typename Op::Step& into, typename Op::Step&& more) { append(into, std::move(more)); }
struct StreamOf<Op> {
    using type = typename Op::Step;
};

// The outcome, or the error, that a latest<Op>() holds; null when it holds the other or nothing.
template <typename T>
const T* outcome_of(const std::optional<Result<T>>& latest) {
    return latest && *latest ? &**latest : nullptr;
}
template <typename T>
const Error* error_of(const std::optional<Result<T>>& latest) {
    return latest && !*latest ? &latest->error() : nullptr;
}

class InferenceController {
public:
    explicit InferenceController(std::string path);
    ~InferenceController();
    InferenceController(const InferenceController&) = delete;
    InferenceController& operator=(const InferenceController&) = delete;

    bool start_load(JobRunner& jobs, const SessionOptions& options);
    template <typename Op>
    bool start(JobRunner& jobs, typename Op::Options options);
    void cancel();
    void poll();

    // Whether a job of Op is running.
    template <typename Op>
    bool running() const {
        return m_job && m_running == Op::name;
    }
    // What the running job is called ("load", or its Op's title); empty when none runs.
    std::string_view running_title() const { return m_job ? m_running_title : std::string_view(); }
    // The Result of the last job of Op that published, if any.
    template <typename Op>
    const std::optional<Result<typename Op::Outcome>>& latest() const {
        return slot<Op>().latest;
    }
    // How many jobs of Op have published (result or error), so views notice a new result.
    template <typename Op>
    uint64_t published() const {
        return slot<Op>().published;
    }
    // What the running or last job of Op streamed (see StreamOf).
    template <typename Op>
    const typename StreamOf<Op>::type& stream() const {
        return slot<Op>().stream;
    }
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

private:
    static constexpr std::string_view kLoadJob = "load";

    template <typename Op>
    struct Slot {
        std::optional<Result<typename Op::Outcome>> latest;
        uint64_t published = 0;
        typename StreamOf<Op>::type stream;
    };
    template <typename List>
    struct SlotsOf;
    template <typename... Ops>
    struct SlotsOf<OpList<Ops...>> {
        using type = std::tuple<Slot<Ops>...>;
    };

    template <typename Op>
    Slot<Op>& slot() {
        return std::get<Slot<Op>>(m_slots);
    }
    template <typename Op>
    const Slot<Op>& slot() const {
        return std::get<Slot<Op>>(m_slots);
    }

    Error refusal() const;
    // Starts `work(JobContext&) -> Result<std::any>` as the one job, shown as `job_name`;
    // `publish` takes its result on the main thread. A call refused meanwhile names `title`.
    void start_job(JobRunner& jobs, std::string_view name, std::string_view title, std::string job_name,
                   std::function<Result<std::any>(JobContext&)> work, std::function<void(Result<std::any>)> publish);
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

    JobHandle<std::any> m_job;
    std::string_view m_running;  // the name of the running job's Op, or kLoadJob
    std::string_view m_running_title;
    std::function<void(Result<std::any>)> m_publish;  // takes the running job's result
    std::function<void()> m_take_stream;  // moves what the running job streamed into its slot
    typename SlotsOf<AllOps>::type m_slots;
};

template <typename Op>
bool InferenceController::start(JobRunner& jobs, typename Op::Options options) {
    if (!can_decode() || busy()) return false;
    if constexpr (requires { options.b_model; })
        if (options.b_model.empty()) return false;
    using Outcome = typename Op::Outcome;
    using Stream = typename StreamOf<Op>::type;
    Slot<Op>& into = slot<Op>();
    into.latest.reset();
    m_take_stream = nullptr;
    OnStep<Op> on_step;
    if constexpr (!std::is_same_v<Stream, NoStep>) {
        // What the job streamed and poll() did not take yet.
        struct Buffer {
            std::mutex mutex;
            Stream pending;
        };
        auto buffer = std::make_shared<Buffer>();
        into.stream = Stream{};
        on_step = [buffer](const Stream& more) {
            std::lock_guard lock(buffer->mutex);
            append(buffer->pending, Stream(more));
        };
        m_take_stream = [this, buffer] {
            std::lock_guard lock(buffer->mutex);
            append(slot<Op>().stream, std::move(buffer->pending));
            buffer->pending = Stream{};
        };
    }
    start_job(
        jobs, Op::name, op_title<Op>(), std::string(op_title<Op>()),
        [session = m_session, options = std::move(options), on_step](JobContext& job) -> Result<std::any> {
            auto outcome = session->run<Op>(options, &job, on_step);
            if (!outcome) return outcome.error();
            return std::any(std::move(outcome).value());
        },
        [this](Result<std::any> result) {
            Slot<Op>& published = slot<Op>();
            if (result)
                published.latest = Result<Outcome>(std::any_cast<Outcome&&>(std::move(result).value()));
            else
                published.latest = Result<Outcome>(result.error());
            ++published.published;
        });
    return true;
}

}  // namespace mlens
