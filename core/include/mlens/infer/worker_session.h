// WorkerSession: a model loaded into llama.cpp inside a worker process, driven over a socket.
//
// llama.cpp runs in our process only through this class: it can abort on a GGML_ASSERT, take a
// SIGBUS when the file it maps is truncated, hang, or exhaust memory, and any of that ends the
// worker (`mlens-llama-worker`), never ModelLens and its open documents.
//
// Contract:
//  - load() takes any text that names a model (open/target.h); a store reference stands for its
//    manifest file, which the worker opens through the store to reach the GGUF blob. It checks
//    the path first: it must name a regular file (a FIFO, device, directory or
//    missing path gets ErrorCode::E_NOT_REGULAR and never reaches llama.cpp, whose open would block on a
//    FIFO). When `expected` is given (the file as a document opened it), a file whose device,
//    inode, size or modification time differ gets ErrorCode::E_FILE_CHANGED. The worker checks the same
//    identity again right before llama.cpp opens the file. Then it starts the worker and loads
//    the model there through load_model_session (model_loader.h), the same route as in process.
//  - Threads: options.n_threads 0 asks for the default of choose_threads (threads.h); a count
//    above the online cores is capped. threads() is what llama.cpp got, thread_note() why.
//  - run<Op>(options) runs one operation of AllOps (operations.h) in the worker, which runs
//    exactly the in-process code of the same name and so gives the same values. on_step runs on
//    the calling thread for each step as it arrives (a generation sends its steps in batches at
//    most 20 ms apart, the first at once); cancel through the JobContext
//    signals the worker, which stops at its next check like the in-process code. From the
//    cancel on, no more steps are delivered and the call returns ErrorCode::E_CANCELLED even when the
//    worker's result was already on its way.
//  - Every llama.cpp log line of the worker arrives in log() as it is written (every 50 ms),
//    and the worker's stderr (where GGML_ASSERT writes before it aborts) as error lines.
//  - When the worker dies, the call in progress returns ErrorCode::E_LLAMA_STOPPED with the message
//    "llama.cpp stopped: REASON" (SIGABRT with the assert's text, SIGBUS, SIGKILL, exit status,
//    or no answer: a cancelled call that does not return within kCancelGraceMs, a quick call
//    past kQuickCallMs, a worker that sends no frame for options.worker_timeout_s seconds —
//    "the worker sent nothing for 120 s (killed)" — which kill it). stopped() is then set, and
//    every later call returns the same error without starting anything: load again to continue.
//  - Frames from the worker are checked before they are decoded (worker_wire.h FrameReader: at
//    most kMaxFrameBytes, kMaxFrameDepth levels of nesting); a frame beyond them kills the worker
//    and the call returns ErrorCode::E_LLAMA_STOPPED with the frame's error, "(killed)". This
//    process only reads what arrived, so a worker that stops inside a frame is silence too.
//  - Text in results, errors and log lines is llama.cpp's, unescaped: callers escape it for
//    display (escape.h), as for the in-process API.
//  - A WorkerSession is used by one thread at a time. The destructor ends the worker.
#pragma once

#include <sys/types.h>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/infer/model_loader.h"
#include "mlens/infer/operations.h"
#include "mlens/infer/session.h"

namespace mlens::wire {
template <typename T, typename SFINAE>
struct Serializer;
// The frames of the worker's wire (core/src/infer/worker_wire.h).
using Json =
    nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t, std::uint64_t, double, std::allocator, Serializer>;
}  // namespace mlens::wire

namespace mlens {

inline constexpr int kCancelGraceMs = 5000;
inline constexpr int kQuickCallMs = 30000;

// What identifies the bytes of a file between two looks at it.
struct FileVersion {
    uint64_t device = 0;
    uint64_t inode = 0;
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileVersion&) const = default;
};

// An error of a comparison (AbOp, KldOp with B, DivergenceOp) that is about model B
// rather than A says so: its message starts with "model B: ", whether the client found B missing or
// changed or the worker could not load it. about_model_b marks `e` so (once); is_about_model_b
// tells, so that a caller can name B's file.
Error about_model_b(Error e);
bool is_about_model_b(const Error& e);

// The identity of `path` (symlinks followed) if it is a regular file; ErrorCode::E_NOT_REGULAR otherwise
// (naming what it is: a FIFO, a directory, ...), ErrorCode::E_IO when it cannot be examined.
Result<FileVersion> regular_file_identity(const std::string& path);

// The worker executable: $MLENS_LLAMA_WORKER, else `mlens-llama-worker` next to this program,
// else the installed one (PREFIX/libexec/modellens/) or the one of this program's build folder
// (program_files.h). Empty when none exists.
std::string llama_worker_executable();

class WorkerSession {
public:
    static Result<std::unique_ptr<WorkerSession>> load(const std::string& text, const SessionOptions& options, JobContext* job = nullptr,
                                                       std::shared_ptr<LogCapture> log = nullptr,
                                                       const std::optional<FileVersion>& expected = std::nullopt);
    ~WorkerSession();
    WorkerSession(const WorkerSession&) = delete;
    WorkerSession& operator=(const WorkerSession&) = delete;

    const std::string& path() const { return m_path; }
    const ModelFacts& facts() const { return m_facts; }
    const LoadRoute& route() const { return m_route; }
    const SessionOptions& options() const { return m_options; }  // n_threads as chosen
    int threads() const { return m_options.n_threads; }
    const std::string& thread_note() const { return m_thread_note; }
    uint32_t n_ctx() const { return m_n_ctx; }
    LogCapture& log() const { return *m_log; }
    pid_t pid() const { return m_pid; }
    const std::optional<Error>& stopped() const { return m_stopped; }

    // Runs Op (operations.h) on this model; an Op with a b_model loads that model beside it.
    template <typename Op>
    Result<typename Op::Outcome> run(typename Op::Options options, JobContext* job = nullptr, const OnStep<Op>& on_step = {});

private:
    struct Channel;
    WorkerSession();

    using FrameHandler = std::function<void(const wire::Json& frame)>;
    // Sends one request and returns its final frame (an "error" frame as that Error); each step
    // of streamed "steps" frames goes to on_frame. quick: a call that must answer within kQuickCallMs.
    Result<wire::Json> call(const wire::Json& request, JobContext* job, bool quick, const FrameHandler& on_frame = {});
    Error stop(std::string reason);
    // After the worker ended: its temporaries (a converted copy in the temp folder, a save-base
    // file being written) are removed, with a notice each (owner_stamp.h).
    void remove_worker_temporaries();

    std::string m_path;
    std::vector<std::string> m_write_folders;  // where the worker was asked to write files
    SessionOptions m_options;
    std::string m_thread_note;
    ModelFacts m_facts;
    LoadRoute m_route;
    uint32_t m_n_ctx = 0;
    std::shared_ptr<LogCapture> m_log;
    pid_t m_pid = -1;
    std::unique_ptr<Channel> m_channel;
    std::optional<Error> m_stopped;
};

}  // namespace mlens
