#include "mlens/util/helper_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "mlens/io/unique_fd.h"

extern char** environ;

namespace mlens {

namespace {

struct Pipes {
    UniqueFd in_read, in_write, out_read, out_write, err_read, err_write;
};

bool make_pipe(UniqueFd& r, UniqueFd& w) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    r.reset(fds[0]);
    w.reset(fds[1]);
    return true;
}

// A helper that exits before reading its input must not take this process down with SIGPIPE:
// the signal is blocked for this thread during the write and a pending one is taken back.
ssize_t write_without_sigpipe(int fd, const char* data, size_t size) {
    sigset_t pipe_only, previous;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    const ssize_t w = ::write(fd, data, size);
    if (w < 0 && errno == EPIPE) {
        const timespec now{0, 0};
        while (sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
        }
        errno = EPIPE;
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return w;
}

struct Exchange {
    std::string out, err;
    bool timed_out = false, too_large = false;
};

// Writes `input` to the child's stdin while reading its stdout and stderr, until both close or the
// time runs out.
Exchange exchange(Pipes& p, const std::string& input, int timeout_ms, size_t output_cap) {
    Exchange x;
    size_t written = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    ::fcntl(p.in_write.get(), F_SETFL, O_NONBLOCK);
    while (p.out_read.valid() || p.err_read.valid()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            x.timed_out = true;
            break;
        }
        pollfd fds[3];
        int n = 0;
        auto add = [&](UniqueFd& fd, short events) {
            if (fd.valid()) fds[n++] = pollfd{fd.get(), events, 0};
        };
        add(p.out_read, POLLIN);
        add(p.err_read, POLLIN);
        add(p.in_write, POLLOUT);
        if (::poll(fds, n, static_cast<int>(left)) < 0 && errno != EINTR) break;
        for (int i = 0; i < n; ++i) {
            if (!fds[i].revents) continue;
            if (fds[i].fd == p.in_write.get()) {
                const ssize_t w = write_without_sigpipe(p.in_write.get(), input.data() + written, input.size() - written);
                if (w > 0) written += static_cast<size_t>(w);
                if (w < 0 && errno != EAGAIN && errno != EINTR) p.in_write.reset();
                if (written == input.size()) p.in_write.reset();
                continue;
            }
            UniqueFd& fd = fds[i].fd == p.out_read.get() ? p.out_read : p.err_read;
            std::string& sink = &fd == &p.out_read ? x.out : x.err;
            char buffer[65536];
            const ssize_t r = ::read(fd.get(), buffer, sizeof buffer);
            if (r > 0) {
                sink.append(buffer, static_cast<size_t>(r));
                if (sink.size() > output_cap) {
                    x.too_large = true;
                    return x;
                }
            } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                fd.reset();
            }
        }
    }
    return x;
}

}  // namespace

Result<HelperExit> run_helper_process(const std::string& program, const std::vector<std::string>& args, const std::string& input,
                                      int timeout_ms, size_t output_cap) {
    Pipes p;
    if (!make_pipe(p.in_read, p.in_write) || !make_pipe(p.out_read, p.out_write) || !make_pipe(p.err_read, p.err_write))
        return Error{ErrorCode::E_IO, "", std::nullopt, "cannot create pipes for " + program};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, p.in_read.get(), 0);
    posix_spawn_file_actions_adddup2(&actions, p.out_write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, p.err_write.get(), 2);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return Error{ErrorCode::E_NO_WORKER, "", std::nullopt, "cannot start " + program};
    p.in_read.reset();
    p.out_write.reset();
    p.err_write.reset();
    Exchange x = exchange(p, input, timeout_ms, output_cap);
    if (x.timed_out || x.too_large) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    HelperExit exit;
    exit.out = std::move(x.out);
    exit.err = std::move(x.err);
    exit.timed_out = x.timed_out;
    exit.too_large = x.too_large;
    exit.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit;
}

}  // namespace mlens
