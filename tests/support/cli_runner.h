// Runs the built mlens command line (MLENS_CLI_PATH) and captures what it printed.
#pragma once

#include <string>
#include <vector>

namespace mlens::test {

struct CliRun {
    int exit_status = -1;   // -1 when the process did not exit normally (killed by a signal)
    std::string out;
    std::string err;
    std::vector<std::string> err_lines() const;
};

// Runs `mlens args...` with no shell involved; stdout and stderr go through files in a fresh
// temporary directory, and standard input reads `stdin_text` (empty: end of file at once).
CliRun run_mlens(const std::vector<std::string>& args, const std::string& stdin_text = {});

}  // namespace mlens::test
