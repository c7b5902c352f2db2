#include "cli_runner.h"

#include "build_paths.h"

#include <fstream>
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace mlens::test {

std::vector<std::string> CliRun::err_lines() const {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < err.size()) {
        size_t nl = err.find('\n', start);
        if (nl == std::string::npos) nl = err.size();
        lines.push_back(err.substr(start, nl - start));
        start = nl + 1;
    }
    return lines;
}

MlensProcess::MlensProcess(const std::vector<std::string>& args, const std::function<void()>& in_child, const std::string& stdin_text) {
    std::string out_path = m_dir.file("stdout"), err_path = m_dir.file("stderr"), in_path = m_dir.file("stdin");
    write_whole_file(in_path, std::vector<uint8_t>(stdin_text.begin(), stdin_text.end()));
    const ExecArgs exec_args(MLENS_CLI_PATH, args);
    // Standard output is a file: without $COLUMNS, which a test sets for a width, text is not fitted.
    m_pid = ::fork();
    if (m_pid < 0) throw std::runtime_error("fork failed");
    if (m_pid == 0) {
        int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = ::open(in_path.c_str(), O_RDONLY);
        if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
        ::close(in);
        ::close(out);
        ::close(err);
        if (in_child) in_child();
        ::execv(MLENS_CLI_PATH, exec_args.argv());
        ::_exit(127);
    }
}

std::string MlensProcess::err_so_far() const {
    std::ifstream in(m_dir.file("stderr"), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

MlensProcess::~MlensProcess() {
    if (m_pid <= 0) return;
    ::kill(m_pid, SIGKILL);
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {}
}

CliRun MlensProcess::wait(const CliLimits& limits) {
    CliRun run;
    int status = 0;
    rusage usage{};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limits.seconds);
    bool waiting = limits.seconds > 0, signalled = false;
    for (;;) {
        const pid_t done = ::wait4(m_pid, &status, waiting ? WNOHANG : 0, &usage);
        if (done == m_pid) break;
        if (done < 0 && errno != EINTR) throw std::runtime_error("wait4 failed");
        if (done == 0 && std::chrono::steady_clock::now() >= deadline) {
            // First the stop signal; if that does not end it in 30 s, SIGKILL.
            ::kill(m_pid, signalled ? SIGKILL : limits.stop_signal);
            run.timed_out = true;
            waiting = !signalled && limits.stop_signal != SIGKILL;
            signalled = true;
            deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        }
        if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    m_pid = -1;
    run.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
    run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    auto out = read_whole_file(m_dir.file("stdout")), err = read_whole_file(m_dir.file("stderr"));
    run.out.assign(out.begin(), out.end());
    run.err.assign(err.begin(), err.end());
    return run;
}

namespace {

// A pseudo-terminal for a child's standard error: this process holds both sides, a thread reads
// all the master shows until the slave is closed by the child and by close_slave().
class TerminalCapture {
public:
    TerminalCapture() {
        m_master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m_master < 0 || ::grantpt(m_master) != 0 || ::unlockpt(m_master) != 0) throw std::runtime_error("no pseudo-terminal");
        m_slave = ::open(::ptsname(m_master), O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m_slave < 0) throw std::runtime_error("cannot open the pseudo-terminal's slave");
        m_reader = std::thread([this] {
            char buffer[4096];
            for (;;) {
                const ssize_t n = ::read(m_master, buffer, sizeof buffer);
                if (n > 0)
                    m_shown.append(buffer, static_cast<size_t>(n));
                else if (n == 0 || errno != EINTR)
                    break;  // EIO: every holder of the slave closed it
            }
        });
    }
    ~TerminalCapture() {
        close_slave();
        if (m_reader.joinable()) m_reader.join();
        ::close(m_master);
    }
    int slave() const { return m_slave; }
    // Once the child has ended: everything it showed.
    std::string shown() {
        close_slave();
        m_reader.join();
        return m_shown;
    }

private:
    void close_slave() {
        if (m_slave >= 0) ::close(m_slave);
        m_slave = -1;
    }
    int m_master = -1, m_slave = -1;
    std::string m_shown;
    std::thread m_reader;
};

}  // namespace

CliRun run_mlens(const std::vector<std::string>& args, const CliLimits& limits, const std::string& stdin_text) {
    const uint64_t address_space = limits.address_space_bytes;
    const unsigned open_files = limits.max_open_files;
    std::optional<TerminalCapture> terminal;
    if (limits.stderr_terminal) terminal.emplace();
    const int terminal_fd = terminal ? terminal->slave() : -1;
    auto apply_limits = [address_space, open_files, terminal_fd] {
        if (terminal_fd >= 0 && ::dup2(terminal_fd, STDERR_FILENO) < 0) ::_exit(125);
        const rlimit as{address_space, address_space};
        if (address_space && ::setrlimit(RLIMIT_AS, &as) != 0) ::_exit(127);
        const rlimit files{open_files, open_files};
        if (open_files && ::setrlimit(RLIMIT_NOFILE, &files) != 0) ::_exit(126);
    };
    CliRun run = MlensProcess(args, apply_limits, stdin_text).wait(limits);
    if (terminal) run.err = terminal->shown();
    return run;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

nlohmann::json run_mlens_json(const std::vector<std::string>& args) {
    CliRun run = run_mlens(args);
    INFO(run.out << run.err);
    REQUIRE(run.exit_status == 0);
    return nlohmann::json::parse(run.out);
}

}  // namespace mlens::test
