#include "mlens/infer/worker_session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <tuple>
#include <type_traits>

#include "mlens/infer/threads.h"
#include "mlens/io/file_type.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/io/unique_fd.h"
#include "mlens/open/target.h"
#include "mlens/remote/remote_url.h"
#include "mlens/util/program_files.h"
#include "worker_wire.h"

extern char** environ;

namespace mlens {

namespace {

using Json = wire::Json;
using Clock = std::chrono::steady_clock;

// Bytes of the worker's stderr kept for the stop message and the log.
constexpr size_t kStderrLineMax = 4000;

std::string describe_status(int status) {
    if (WIFEXITED(status)) return "the worker exited with status " + std::to_string(WEXITSTATUS(status));
    if (!WIFSIGNALED(status)) return "the worker ended";
    const int sig = WTERMSIG(status);
    switch (sig) {
        case SIGABRT:
            return "SIGABRT (llama.cpp aborted, as a failed GGML_ASSERT does)";
        case SIGBUS:
            return "SIGBUS (the model file shrank or changed while llama.cpp had it mapped)";
        case SIGSEGV:
            return "SIGSEGV (llama.cpp read or wrote invalid memory)";
        case SIGKILL:
            return "SIGKILL (killed from outside, e.g. by the out-of-memory killer)";
        default:
            break;
    }
    const char* name = sigabbrev_np(sig);
    return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

// The file the worker is given for `text`: a store reference names its manifest, which the worker
// opens through the store (model_loader.h) to reach the GGUF blob; anything else as it is. An
// existing path is never a reference (a file wins over a reference), so it is not opened here.
std::string worker_path(const std::string& text) {
    struct stat st {};
    if (::stat(text.c_str(), &st) == 0) return text;
    Target target = resolve(text);
    return target.kind == TargetKind::store_model ? target.path : text;
}

constexpr std::string_view kModelBPrefix = "model B: ";

}  // namespace

namespace worker_detail {

Error decode_failure(const std::exception& e) {
    return Error{ErrorCode::E_WIRE, "", std::nullopt, std::string("the worker's answer does not decode: ") + e.what()};
}

Result<Json> second_model_fields(const std::string& b_text) {
    const std::string b_path = worker_path(b_text);
    auto identity = regular_file_identity(b_path);
    if (!identity) return about_model_b(identity.error());
    return Json{{"b_path", b_path}, {"b_identity", *identity}};
}

}  // namespace worker_detail

Error about_model_b(Error e) {
    if (!is_about_model_b(e)) e.message.insert(0, kModelBPrefix);
    return e;
}

bool is_about_model_b(const Error& e) { return e.message.starts_with(kModelBPrefix); }

Result<FileVersion> regular_file_identity(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        // A remote model is read by ranges, never downloaded whole: llama.cpp cannot be given it.
        if (is_remote_reference(path))
            return Error{ErrorCode::E_ARGS, "", std::nullopt,
                         "llama.cpp runs on a local file; a remote model is read by ranges, never downloaded whole (download it to run it)"};
        return Error{ErrorCode::E_IO, "", std::nullopt, "cannot examine the file: " + std::string(std::strerror(errno))};
    }
    if (!S_ISREG(st.st_mode))
        return Error{ErrorCode::E_NOT_REGULAR, "", std::nullopt,
                     "not a regular file (" + std::string(file_type_text(st.st_mode)) + "); llama.cpp is not asked to open it"};
    return FileVersion{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                       static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::string llama_worker_executable() {
    return helper_program("MLENS_LLAMA_WORKER", "mlens-llama-worker", MLENS_LLAMA_WORKER_INSTALLED, MLENS_LLAMA_WORKER_BUILD_TREE);
}

// Our end of the socket and of the worker's stderr pipe.
struct WorkerSession::Channel {
    UniqueFd stderr_pipe;  // closed after the socket
    UniqueFd socket;
    wire::FrameReader frames;
    std::string stderr_partial;  // a stderr line still being written
    std::string last_stderr;  // the last complete non-empty stderr line

    // Moves whatever the worker wrote to stderr into `log` as error lines.
    void drain_stderr(LogCapture& log, bool final) {
        if (!stderr_pipe.valid()) return;
        char buf[4096];
        for (;;) {
            ssize_t n = ::read(stderr_pipe.get(), buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n == 0) {
                stderr_pipe.reset();  // the worker and everything it started closed stderr
            }
            if (n <= 0) break;
            stderr_partial.append(buf, static_cast<size_t>(n));
            size_t nl;
            while ((nl = stderr_partial.find('\n')) != std::string::npos) {
                take_line(log, stderr_partial.substr(0, nl));
                stderr_partial.erase(0, nl + 1);
            }
            if (stderr_partial.size() > kStderrLineMax) {
                take_line(log, stderr_partial);
                stderr_partial.clear();
            }
        }
        if (final && !stderr_partial.empty()) {
            take_line(log, stderr_partial);
            stderr_partial.clear();
        }
    }

    void take_line(LogCapture& log, std::string line) {
        if (line.size() > kStderrLineMax) line.resize(kStderrLineMax);
        if (!line.empty()) last_stderr = line;
        log.append(LlamaLogLevel::error, false, line + "\n");
    }
};

WorkerSession::WorkerSession() = default;

WorkerSession::~WorkerSession() {
    m_channel.reset();  // the worker reads end of stream and exits
    if (m_pid > 0) {
        ::kill(m_pid, SIGKILL);
        int status = 0;
        while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {}
        remove_worker_temporaries();
    }
}

void WorkerSession::remove_worker_temporaries() {
    sweep_stale_temporaries(system_temp_folder());
    for (const std::string& folder : m_write_folders) sweep_stale_temporaries(folder);
}

Error WorkerSession::stop(std::string reason) {
    if (m_pid > 0) {
        int status = 0;
        pid_t r = 0;
        // The socket closed because the worker is ending; give it a moment before killing it.
        for (int i = 0; i < 100; ++i) {
            r = ::waitpid(m_pid, &status, WNOHANG);
            if (r != 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (r == 0) {
            ::kill(m_pid, SIGKILL);
            while ((r = ::waitpid(m_pid, &status, 0)) < 0 && errno == EINTR) {}
        }
        if (reason.empty()) reason = r == m_pid ? describe_status(status) : "the worker ended";
        m_pid = -1;
        remove_worker_temporaries();
    }
    std::string last;
    if (m_channel) {
        m_channel->drain_stderr(*m_log, true);
        last = m_channel->last_stderr;
    }
    m_log->flush();
    std::string message = "llama.cpp stopped: " + reason;
    if (!last.empty()) message += ": " + last;
    m_stopped = Error{ErrorCode::E_LLAMA_STOPPED, "", std::nullopt, message};
    m_channel.reset();
    return *m_stopped;
}

Result<Json> WorkerSession::call(const Json& request, JobContext* job, bool quick, const FrameHandler& on_frame) {
    if (m_stopped) return *m_stopped;
    if (!wire::write_frame(m_channel->socket.get(), request)) return stop({});
    const auto started = Clock::now();
    auto last_frame = started;
    const auto silence_limit = std::chrono::seconds(std::max<uint32_t>(m_options.worker_timeout_s, 1));
    std::optional<Clock::time_point> cancel_sent;
    for (;;) {
        // Checked before every frame: a streaming worker sends one every step, so waiting for
        // a quiet moment would never cancel.
        if (job_cancelled(job) && !cancel_sent) {
            ::kill(m_pid, SIGUSR1);
            cancel_sent = Clock::now();
        }
        if (cancel_sent && std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - *cancel_sent).count() > kCancelGraceMs) {
            ::kill(m_pid, SIGKILL);
            return stop("no answer within " + std::to_string(kCancelGraceMs / 1000) + " s of a cancel (killed)");
        }
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
        if (quick && waited > kQuickCallMs) {
            ::kill(m_pid, SIGKILL);
            return stop("no answer within " + std::to_string(kQuickCallMs / 1000) + " s (killed)");
        }
        // The worker sends at least a progress frame every second while it works (llama_worker.h):
        // silence this long means it hangs where it cannot even do that.
        if (Clock::now() - last_frame > silence_limit) {
            ::kill(m_pid, SIGKILL);
            return stop("the worker sent nothing for " + std::to_string(silence_limit.count()) + " s (killed)");
        }
        pollfd fds[2] = {{m_channel->socket.get(), POLLIN, 0}, {m_channel->stderr_pipe.get(), POLLIN, 0}};
        int n = ::poll(fds, 2, 50);
        if (n < 0 && errno != EINTR) return stop("cannot wait for the worker: " + std::string(std::strerror(errno)));
        if (n > 0 && fds[1].revents) m_channel->drain_stderr(*m_log, false);
        // Frames that arrived before the socket closed are still delivered.
        const Status received = n > 0 && fds[0].revents ? m_channel->frames.receive(m_channel->socket.get(), false) : ok_status();
        while (auto frame = m_channel->frames.take()) {
            if (!*frame) {
                ::kill(m_pid, SIGKILL);
                return stop(frame->error().message + " (killed)");
            }
            last_frame = Clock::now();
            const std::string type = (*frame)->value("type", std::string());
            try {
                if (type == "log") {
                    m_log->append(static_cast<LlamaLogLevel>((*frame)->at("level").get<int>()), false,
                                  (*frame)->at("text").get<std::string>() + "\n");
                    continue;
                }
                if (type == "progress") {
                    job_report(job, (*frame)->at("fraction").get<double>());
                    continue;
                }
                // Steps the worker decoded after the cancel are not shown: the caller stopped.
                if (type == "steps") {
                    for (const Json& step : (*frame)->at("steps")) {
                        if (!on_frame || cancel_sent || job_cancelled(job)) break;
                        on_frame(step);
                    }
                    continue;
                }
                if (type == "error") return wire::decode_error(**frame);
            } catch (const std::exception& e) { return worker_detail::decode_failure(e); }
            // A result that crossed the cancel on its way is dropped, as the cancel asked.
            if (cancel_sent) return cancelled_error();
            return std::move(*frame).value();
        }
        if (!received) return stop({});
    }
}

Result<std::unique_ptr<WorkerSession>> WorkerSession::load(const std::string& text, const SessionOptions& options, JobContext* job,
                                                           std::shared_ptr<LogCapture> log, const std::optional<FileVersion>& expected) {
    const std::string path = worker_path(text);
    auto identity = regular_file_identity(path);
    if (!identity) return identity.error();
    if (expected && !(*identity == *expected))
        return Error{ErrorCode::E_FILE_CHANGED, "", std::nullopt, "the file changed since it was opened; open it again"};
    const std::string exe = llama_worker_executable();
    if (exe.empty())
        return Error{ErrorCode::E_NO_WORKER, "", std::nullopt,
                     "mlens-llama-worker, which runs llama.cpp, was not found next to this program"};

    std::unique_ptr<WorkerSession> session(new WorkerSession());
    session->m_path = path;
    session->m_options = options;
    ThreadChoice threads = choose_threads(options.n_threads);
    session->m_options.n_threads = threads.threads;
    session->m_thread_note = threads.note;
    session->m_log = log ? std::move(log) : std::make_shared<LogCapture>();
    session->m_channel = std::make_unique<Channel>();
    Channel& ch = *session->m_channel;

    int sv[2], ep[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return Error{ErrorCode::E_IO, "", std::nullopt, "socketpair failed"};
    if (::pipe2(ep, O_CLOEXEC) != 0) {
        ::close(sv[0]);
        ::close(sv[1]);
        return Error{ErrorCode::E_IO, "", std::nullopt, "pipe failed"};
    }
    ch.socket.reset(sv[0]);
    ch.stderr_pipe.reset(ep[0]);
    ::fcntl(ch.stderr_pipe.get(), F_SETFL, O_NONBLOCK);
    // The child's ends move above the descriptors they are copied to, so no dup2 overwrites another.
    const int child_socket = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    const int child_stderr = ::fcntl(ep[1], F_DUPFD_CLOEXEC, 10);
    ::close(sv[1]);
    ::close(ep[1]);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, child_stderr, 1);
    posix_spawn_file_actions_adddup2(&actions, child_stderr, 2);
    posix_spawn_file_actions_adddup2(&actions, child_socket, 3);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGUSR1}) sigaddset(&defaults, sig);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    // ggml prints a backtrace on abort by attaching gdb to itself unless told not to.
    std::vector<std::string> env_strings;
    for (char** e = environ; e && *e; ++e) env_strings.emplace_back(*e);
    env_strings.emplace_back("GGML_NO_BACKTRACE=1");
    std::vector<char*> envp;
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string arg0 = exe, arg1 = "--channel", arg2 = "3";
    char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
    pid_t pid = -1;
    int rc = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(child_socket);
    ::close(child_stderr);
    if (rc != 0) return Error{ErrorCode::E_NO_WORKER, "", std::nullopt, "cannot start " + exe + ": " + std::strerror(rc)};
    session->m_pid = pid;

    Json request = {{"op", "load"}, {"path", path}, {"options", session->m_options}, {"identity", *identity}};
    auto reply = session->call(request, job, false);
    if (!reply) return reply.error();
    try {
        session->m_facts = reply->at("facts").get<ModelFacts>();
        session->m_route = reply->at("route").get<LoadRoute>();
        session->m_n_ctx = reply->at("n_ctx").get<uint32_t>();
    } catch (const std::exception& e) { return worker_detail::decode_failure(e); }
    job_report(job, 1.0);
    return session;
}

}  // namespace mlens
