// Runs the built mlens command line (MLENS_CLI_PATH) and captures what it printed.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "test_paths.h"

namespace mlens::test {

struct CliRun {
    int exit_status = -1;   // -1 when the process did not exit normally (killed by a signal)
    int signal = 0;         // the signal that ended it, 0 when it exited
    std::string out;
    std::string err;
    std::vector<std::string> err_lines() const;
};

// Runs `mlens args...` with no shell involved; stdout and stderr go through files in a fresh
// temporary directory.
CliRun run_mlens(const std::vector<std::string>& args);

// A running `mlens args...`; `in_child` runs in the child just before exec (resource limits,
// signal dispositions), after its stdout and stderr are redirected.
class MlensProcess {
public:
    explicit MlensProcess(const std::vector<std::string>& args, const std::function<void()>& in_child = nullptr);
    ~MlensProcess();
    MlensProcess(const MlensProcess&) = delete;
    MlensProcess& operator=(const MlensProcess&) = delete;
    pid_t pid() const { return m_pid; }
    CliRun wait();

private:
    TempDir m_dir;
    pid_t m_pid = -1;
};

}  // namespace mlens::test
