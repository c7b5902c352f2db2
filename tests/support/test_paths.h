// Paths the tests use: the pinned llama.cpp source (real upstream vocab GGUFs), the mlens CLI,
// and scratch directories that remove themselves; and the argument array of a program they run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlens::test {

// Every models/ggml-vocab-*.gguf in the pinned llama.cpp source, sorted.
std::vector<std::string> upstream_vocab_files();
std::string llama_source_dir();

// A fresh directory under /tmp, removed with its contents when the object dies.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return m_path; }
    std::string file(const std::string& name) const { return m_path + "/" + name; }

private:
    std::string m_path;
};

std::vector<uint8_t> read_whole_file(const std::string& path);
// Offset of the first byte where a and b differ, or -1 if they are identical (lengths included).
int64_t first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b);
void write_whole_file(const std::string& path, const std::vector<uint8_t>& bytes);
// Every regular file under `dir` (recursively) with its bytes, to show that a run changed none.
std::map<std::string, std::vector<uint8_t>> folder_bytes(const std::string& dir);
// Temporaries of the output path left anywhere under `dir`: writers' files (".tmp-"), previous
// files a commit kept (".prev-"), export folders being assembled (".part-").
int leftovers_in(const std::string& dir);
// The owner stamp (owner_stamp.h) of a process of this pid space that is gone: `pid` (a reaped
// child's, or this process's) with a start time no process of it had.
std::string gone_owner_stamp(long pid);

// Sets (or, given nullopt, unsets) an environment variable for its lifetime, then restores it.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::optional<std::string>& value);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

// `program` then `args`, as the null-terminated array execv takes; the strings live as long as
// the object.
class ExecArgs {
public:
    ExecArgs(std::string program, const std::vector<std::string>& args);
    ExecArgs(const ExecArgs&) = delete;
    ExecArgs& operator=(const ExecArgs&) = delete;
    char* const* argv() const { return m_argv.data(); }

private:
    std::vector<std::string> m_storage;
    std::vector<char*> m_argv;
};

}  // namespace mlens::test
