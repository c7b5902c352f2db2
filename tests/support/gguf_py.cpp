#include "gguf_py.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

#include "test_paths.h"

namespace mlens::test {

namespace {

constexpr const char* kPython = "/usr/bin/python3";

// Runs python3 with `args`, `input` on its standard input and gguf-py importable; the exit
// status and everything it printed (stdout and stderr together).
std::pair<int, std::string> run_python(const std::vector<std::string>& args, const std::string& input) {
    TempDir dir;
    const std::string in_path = dir.file("stdin"), out_path = dir.file("output");
    write_whole_file(in_path, std::vector<uint8_t>(input.begin(), input.end()));
    const ExecArgs exec_args(kPython, args);
    const std::string python_path = llama_source_dir() + "/gguf-py";
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        int in = ::open(in_path.c_str(), O_RDONLY);
        int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) ::_exit(127);
        ::setenv("PYTHONPATH", python_path.c_str(), 1);
        ::execv(kPython, exec_args.argv());
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    const auto printed = read_whole_file(out_path);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::string(printed.begin(), printed.end())};
}

std::optional<std::string> failure(const std::pair<int, std::string>& run) {
    if (run.first == 0) return std::nullopt;
    return "exit status " + std::to_string(run.first) + ": " + run.second;
}

}  // namespace

std::optional<std::string> gguf_py_unavailable() {
    if (::access(kPython, X_OK) != 0) return std::string(kPython) + " is not installed";
    auto run = run_python({"-c", "import numpy, tqdm, gguf"}, "");
    if (run.first != 0) return "gguf-py cannot be imported (python3-numpy and python3-tqdm are needed): " + run.second;
    return std::nullopt;
}

std::optional<std::string> gguf_py_convert_to_big_endian(const std::string& path) {
    const std::string script = llama_source_dir() + "/gguf-py/gguf/scripts/gguf_convert_endian.py";
    return failure(run_python({script, path, "big"}, "YES\n"));
}

std::optional<std::string> gguf_py_write_big_endian(const std::string& in, const std::string& out) {
    const char* code =
        "import sys, numpy as np, gguf\n"
        "r = gguf.GGUFReader(sys.argv[1])\n"
        "w = gguf.GGUFWriter(sys.argv[2], r.fields['general.architecture'].contents(), endianess=gguf.GGUFEndian.BIG)\n"
        "for t in r.tensors:\n"
        "    w.add_tensor(t.name, np.array(t.data))\n"
        "w.write_header_to_file()\n"
        "w.write_kv_data_to_file()\n"
        "w.write_tensors_to_file()\n"
        "w.close()\n";
    return failure(run_python({"-c", code, in, out}, ""));
}

std::optional<std::string> gguf_py_tensor_values(const std::string& path, std::string& failure) {
    const char* code =
        "import sys, json, numpy as np, gguf\n"
        "r = gguf.GGUFReader(sys.argv[1])\n"
        "print(json.dumps({t.name: [float(v) for v in np.asarray(t.data, dtype=np.float32).ravel()] for t in r.tensors}))\n";
    auto run = run_python({"-c", code, path}, "");
    if (run.first != 0) {
        failure = *mlens::test::failure(run);
        return std::nullopt;
    }
    return run.second;
}

}  // namespace mlens::test
