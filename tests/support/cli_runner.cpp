#include "cli_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "test_paths.h"

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

CliRun run_mlens(const std::vector<std::string>& args, const std::string& stdin_text) {
    TempDir dir;
    std::string out_path = dir.file("stdout"), err_path = dir.file("stderr"), in_path = dir.file("stdin");
    write_whole_file(in_path, std::vector<uint8_t>(stdin_text.begin(), stdin_text.end()));
    std::vector<std::string> argv_storage{MLENS_CLI_PATH};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);

    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = ::open(in_path.c_str(), O_RDONLY);
        if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    CliRun run;
    run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    auto out = read_whole_file(out_path), err = read_whole_file(err_path);
    run.out.assign(out.begin(), out.end());
    run.err.assign(err.begin(), err.end());
    return run;
}

}  // namespace mlens::test
