// Paths the tests use: the pinned llama.cpp source (real upstream vocab GGUFs), the mlens CLI,
// and scratch directories that remove themselves.
#pragma once

#include <cstdint>
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

}  // namespace mlens::test
