// Runs the built mlens command line (MLENS_CLI_PATH) and captures what it printed.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "test_paths.h"

namespace mlens::test {

struct CliRun {
    int exit_status = -1;  // -1 when the process did not exit normally (killed by a signal)
    int signal = 0;  // the signal that ended it, 0 when it exited
    bool timed_out = false;  // sent CliLimits::stop_signal when CliLimits::seconds ran out
    uint64_t peak_rss_bytes = 0;  // the process's largest resident set
    std::string out;
    std::string err;
    std::vector<std::string> err_lines() const;
};

// What a run may use: an address-space limit (RLIMIT_AS, bytes; 0: none), a time after which the
// process is sent `stop_signal` (seconds; 0: none; a process still running 30 s after that signal
// is killed) and a descriptor limit (soft and hard RLIMIT_NOFILE; 0: inherited). With
// stderr_terminal, standard error is a pseudo-terminal, as in an interactive shell (progress
// lines drawn): CliRun::err is what it showed there, each newline as "\r\n".
struct CliLimits {
    uint64_t address_space_bytes = 0;
    double seconds = 0;
    int stop_signal = SIGKILL;
    unsigned max_open_files = 0;
    bool stderr_terminal = false;
};

// Runs `mlens args...` with no shell involved; stdout and stderr go through files in a fresh
// temporary directory, and standard input reads `stdin_text` (empty: end of file at once).
CliRun run_mlens(const std::vector<std::string>& args, const CliLimits& limits = {}, const std::string& stdin_text = {});
inline CliRun run_mlens(const std::vector<std::string>& args, const std::string& stdin_text) {
    return run_mlens(args, CliLimits{}, stdin_text);
}

// The lines of `text` as std::getline splits it: a last line without a newline counts, no empty
// line follows a final newline.
std::vector<std::string> lines_of(const std::string& text);

// The JSON `mlens args...` printed; fails the test, showing what it printed, unless it exits 0.
nlohmann::json run_mlens_json(const std::vector<std::string>& args);

// A running `mlens args...` reading `stdin_text`; `in_child` runs in the child just before exec
// (resource limits, signal dispositions), after its standard streams are redirected.
class MlensProcess {
public:
    explicit MlensProcess(const std::vector<std::string>& args, const std::function<void()>& in_child = nullptr,
                          const std::string& stdin_text = {});
    ~MlensProcess();
    MlensProcess(const MlensProcess&) = delete;
    MlensProcess& operator=(const MlensProcess&) = delete;
    pid_t pid() const { return m_pid; }
    // What the process has written to stderr so far.
    std::string err_so_far() const;
    // Waits for the process to end; `limits.seconds` and `stop_signal` apply from this call.
    CliRun wait(const CliLimits& limits = {});

private:
    TempDir m_dir;
    pid_t m_pid = -1;
};

}  // namespace mlens::test
