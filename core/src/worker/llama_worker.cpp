#include "mlens/worker/llama_worker.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>

#include "mlens/infer/worker_session.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/io/temp_registry.h"
#include "worker_ops.h"
#include "infer/worker_wire.h"

namespace mlens {

namespace {

using Json = wire::Json;

// The longest a request goes without a frame to the client, which takes silence for a hang.
constexpr auto kHeartbeat = std::chrono::seconds(1);

std::atomic<JobContext*> g_job{nullptr};

void on_cancel_signal(int) {
    if (JobContext* job = g_job.load()) job->cancel();
}

Error not_loaded() { return Error{ErrorCode::E_NOT_LOADED, "", std::nullopt, "no model is loaded in the worker"}; }

class Server {
public:
    explicit Server(int fd) : m_fd(fd), m_parent(::getppid()), m_log(std::make_shared<LogCapture>()) {}

    int run() {
        for (;;) {
            auto request = m_reader.read(m_fd);
            if (!request) return request.error().code == ErrorCode::E_EOF ? 0 : 1;
            serve(*request);
        }
    }

private:
    void send(const Json& message) {
        std::lock_guard lock(m_send_mutex);
        // A failed send means the client is gone; the next read ends the loop.
        (void)wire::write_frame(m_fd, message);
    }

    void send_new_log_lines() {
        std::lock_guard lock(m_log_mutex);
        for (const LlamaLogLine& line : m_log->lines_since(m_log_sent, &m_log_sent))
            send({{"type", "log"}, {"level", static_cast<int>(line.level)}, {"text", line.text}});
    }

    // While a request runs: its log lines and progress every 50 ms, the progress again every
    // kHeartbeat even when it did not move.
    void pump(JobContext& job, std::mutex& mutex, std::condition_variable& wake, bool& done) {
        double sent_progress = -1.0;
        auto sent_at = std::chrono::steady_clock::now();
        std::unique_lock lock(mutex);
        while (!wake.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
            // Between requests the end of the socket ends the worker; during one, a parent that
            // is gone (this process was re-parented) does.
            if (::getppid() != m_parent) {
                remove_registered_temp_files();
                ::_exit(1);
            }
            send_new_log_lines();
            const double p = job.progress();
            if (p != sent_progress || std::chrono::steady_clock::now() - sent_at >= kHeartbeat) {
                send({{"type", "progress"}, {"fraction", p}});
                sent_progress = p;
                sent_at = std::chrono::steady_clock::now();
            }
        }
    }

    void serve(const Json& request) {
        JobContext job;
        g_job.store(&job);
        std::mutex mutex;
        std::condition_variable wake;
        bool done = false;
        std::thread pumper([&] { pump(job, mutex, wake, done); });
        Json reply;
        try {
            Result<Json> r = dispatch(request, job);
            reply = r ? std::move(r).value() : wire::encode_error(r.error());
        } catch (const std::bad_alloc&) {
            // A request bigger than the memory there is (a huge context, a ulimit -v): the worker
            // lives on and says so, rather than blaming the request's encoding.
            reply = wire::encode_error(
                Error{ErrorCode::E_NO_MEMORY, "", std::nullopt,
                      "the llama.cpp worker ran out of memory for this request (a smaller context or batch needs less)"});
        } catch (const std::exception& e) {
            reply = wire::encode_error(Error{ErrorCode::E_WIRE, "", std::nullopt, std::string("a request does not decode: ") + e.what()});
        }
        {
            std::lock_guard lock(mutex);
            done = true;
        }
        wake.notify_one();
        pumper.join();
        g_job.store(nullptr);
        send_new_log_lines();
        send(reply);
    }

    static Status check_identity(const std::string& path, const Json& expected) {
        auto now = regular_file_identity(path);
        if (!now) return now.error();
        if (!(*now == expected.get<FileVersion>()))
            return Error{ErrorCode::E_FILE_CHANGED, "", std::nullopt, "the file changed after it was checked; load it again"};
        return ok_status();
    }

    Result<Json> load(const Json& request, JobContext& job) {
        const std::string path = request.at("path").get<std::string>();
        Status same = check_identity(path, request.at("identity"));
        if (!same) return same.error();
        m_session.reset();
        auto loaded = load_model_session(path, request.at("options").get<SessionOptions>(), &job, m_log);
        if (!loaded) return loaded.error();
        m_session = std::move(loaded->session);
        return Json{{"type", "loaded"}, {"facts", m_session->facts()}, {"route", loaded->route}, {"n_ctx", m_session->n_ctx()}};
    }

    // Model B of a comparison, from the request's b_path (checked against the identity the
    // client saw) with this session's options; its errors say "model B".
    Result<LoadedSession> load_model_b(const Json& request, JobContext& job) {
        const std::string path = request.at("b_path").get<std::string>();
        Status same = check_identity(path, request.at("b_identity"));
        if (!same) return about_model_b(same.error());
        auto loaded = load_model_session(path, m_session->options(), &job, m_log);
        if (!loaded) return about_model_b(loaded.error());
        job.report(0.0);
        return loaded;
    }

    Result<Json> dispatch(const Json& request, JobContext& job) {
        const std::string op = request.at("op").get<std::string>();
        if (op == "load") return load(request, job);
        if (!m_session) return not_loaded();
        const auto& handlers = operation_handlers();
        const auto handler = handlers.find(op);
        if (handler == handlers.end()) return Error{ErrorCode::E_WIRE, "", std::nullopt, "unknown request"};
        WorkerCall call(
            *m_session, job, request, [this](const Json& frame) { send(frame); },
            [this](const Json& r, JobContext& j) { return load_model_b(r, j); });
        return handler->second(request, call);
    }

    int m_fd;
    wire::FrameReader m_reader;
    pid_t m_parent;
    std::mutex m_send_mutex;
    std::mutex m_log_mutex;
    std::shared_ptr<LogCapture> m_log;
    uint64_t m_log_sent = 0;
    std::unique_ptr<Session> m_session;
};

}  // namespace

int llama_worker_main(int argc, char** argv) {
    int fd = -1;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--channel") == 0) fd = std::atoi(argv[i + 1]);
    if (fd < 0) {
        std::fprintf(stderr, "mlens-llama-worker runs llama.cpp for ModelLens; it is started by mlens and modellens\n");
        return 2;
    }
    print_temp_notices("mlens-llama-worker");
    struct sigaction sa {};
    sa.sa_handler = on_cancel_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGUSR1, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    // Ctrl+C reaches the whole foreground group, the worker included: its scratch copy goes too.
    remove_temp_files_on_signals();
    return Server(fd).run();
}

}  // namespace mlens
