// Session: one GGUF loaded into llama.cpp (the pinned source) for test inference.
//
// Contract:
//  - Session::load() initialises the llama.cpp backend once per process (init_llama_backend),
//    loads the file on the CPU with a progress callback (JobContext fraction 0..1; cancelling
//    aborts the load with ErrorCode::E_CANCELLED) and, unless vocab_only, creates one context of
//    min(n_ctx, training context) tokens whose batch holds the whole context, so a prompt is
//    decoded with one llama_decode call.
//  - Every llama.cpp log line of the load and of later calls on this session (made on the
//    calling thread) goes into the session's LogCapture (shared, so a caller can pass its own
//    console). A load that fails returns ErrorCode::E_LLAMA_LOAD whose message carries llama.cpp's own
//    error lines (e.g. "... wrong number of tensors; expected 21, got 20").
//  - vocab_only loads only the tokenizer: tokenize/detokenize/chat template work, decoding
//    returns ErrorCode::E_VOCAB_ONLY. Facts that need weights (n_params, size) are 0 then.
//  - dry_run loads with llama_model_params::no_alloc: hyperparameters, vocabulary and the tensor
//    table are checked as in a full load, no tensor memory is allocated and no weight is read
//    (no_alloc leaves the data unread; see loadability.h for the dry run that uses it); no
//    context is created, so it behaves as vocab_only afterwards (facts().vocab_only is true).
//  - n_threads goes through choose_threads (threads.h) once at load: 0 becomes the default for
//    the machine's current load, a count above the online cores is capped; options() has the result.
//  - llama.cpp runs in this process here: ModelLens itself drives it through WorkerSession
//    (worker_session.h), whose worker process runs this code.
//  - A Session is used by one thread at a time. JobBinding ties a JobContext to the context's
//    abort callback for the duration of one operation, so cancel stops a running llama_decode.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "mlens/infer/llama_log.h"
#include "mlens/job.h"
#include "mlens/result.h"

struct llama_model;
struct llama_context;
struct llama_vocab;

namespace mlens {

struct SessionOptions {
    bool vocab_only = false;
    uint32_t n_ctx = 2048;  // capped at the model's training context
    int n_threads = 0;  // threads for decoding; 0: the default of choose_threads (threads.h)
    bool dry_run = false;  // no_alloc: check the load, allocate and read no tensor data, no context
    bool as_is = false;  // load_model_session: hand the file to llama.cpp unmodified, Ollama-made or not
    uint32_t worker_timeout_s = 120;  // WorkerSession: seconds without a frame from the worker before it is killed
};

// What llama.cpp reports about the loaded model (through its API, not our parser).
struct ModelFacts {
    std::string description;  // llama_model_desc, e.g. "llama ?B all F32"
    std::string architecture;  // general.architecture as llama.cpp read it
    uint64_t n_params = 0;
    uint64_t size_bytes = 0;
    int32_t n_ctx_train = 0;
    int32_t n_embd = 0;
    int32_t n_layer = 0;
    int32_t n_head = 0;
    int32_t n_head_kv = 0;
    int32_t n_vocab = 0;
    std::string vocab_type;  // "spm", "bpe", "wpm", "ugm", "rwkv", "plamo2", "none"
    int32_t bos = -1;
    int32_t eos = -1;
    bool add_bos = false;
    bool has_chat_template = false;
    bool vocab_only = false;
};

class Session {
public:
    static Result<std::unique_ptr<Session>> load(const std::string& path, const SessionOptions& options, JobContext* job = nullptr,
                                                 std::shared_ptr<LogCapture> log = nullptr);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const std::string& path() const { return m_path; }
    const ModelFacts& facts() const { return m_facts; }
    const SessionOptions& options() const { return m_options; }
    LogCapture& log() const { return *m_log; }
    std::shared_ptr<LogCapture> shared_log() const { return m_log; }

    // Raw llama.cpp handles for core/infer; context() is null for vocab-only sessions.
    llama_model* model() const { return m_model; }
    llama_context* context() const { return m_context; }
    const llama_vocab* vocab() const { return m_vocab; }
    uint32_t n_ctx() const { return m_n_ctx; }

    // Binds `job` to the abort callback of this session's contexts while alive.
    class JobBinding {
    public:
        JobBinding(Session& session, JobContext* job);
        ~JobBinding();
        JobBinding(const JobBinding&) = delete;
        JobBinding& operator=(const JobBinding&) = delete;

    private:
        Session& m_session;
        JobContext* m_previous;
    };
    // For llama_context_params.abort_callback: true once the bound job is cancelled.
    static bool abort_requested(void* session);

private:
    Session() = default;

    std::string m_path;
    SessionOptions m_options;
    ModelFacts m_facts;
    std::shared_ptr<LogCapture> m_log;
    llama_model* m_model = nullptr;
    llama_context* m_context = nullptr;
    const llama_vocab* m_vocab = nullptr;
    uint32_t m_n_ctx = 0;
    std::atomic<JobContext*> m_job{nullptr};
};

// Error for "the model has no weights loaded" (vocab-only sessions asked to decode).
Error vocab_only_error(const Session& session);

}  // namespace mlens
