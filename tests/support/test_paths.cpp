#include "test_paths.h"

#include "build_paths.h"
#include "mlens/io/owner_stamp.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace mlens::test {

std::string llama_source_dir() { return MLENS_LLAMA_SOURCE; }

std::vector<std::string> upstream_vocab_files() {
    std::vector<std::string> files;
    std::filesystem::path dir = std::filesystem::path(llama_source_dir()) / "models";
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        std::string name = entry.path().filename().string();
        if (name.starts_with("ggml-vocab-") && entry.path().extension() == ".gguf") files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

TempDir::TempDir() {
    char pattern[] = "/tmp/mlens-test-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    m_path = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

std::vector<uint8_t> read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::map<std::string, std::vector<uint8_t>> folder_bytes(const std::string& dir) {
    std::map<std::string, std::vector<uint8_t>> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file()) out[e.path().string()] = read_whole_file(e.path().string());
    return out;
}

int leftovers_in(const std::string& dir) {
    int n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        for (const char* mark : {".tmp-", ".prev-", ".part-"}) n += name.find(mark) != std::string::npos;
    }
    return n;
}

int64_t first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return static_cast<int64_t>(i);
    return a.size() == b.size() ? -1 : static_cast<int64_t>(n);
}

void write_whole_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

ScopedEnv::ScopedEnv(const char* name, const std::optional<std::string>& value) : m_name(name) {
    if (const char* old = ::getenv(name)) m_old = old;
    if (value)
        ::setenv(name, value->c_str(), 1);
    else
        ::unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
    if (m_old)
        ::setenv(m_name, m_old->c_str(), 1);
    else
        ::unsetenv(m_name);
}

ExecArgs::ExecArgs(std::string program, const std::vector<std::string>& args) {
    m_storage.push_back(std::move(program));
    m_storage.insert(m_storage.end(), args.begin(), args.end());
    for (std::string& a : m_storage) m_argv.push_back(a.data());
    m_argv.push_back(nullptr);
}

std::string gone_owner_stamp(long pid) {
    const std::string mine = owner_stamp();
    return std::to_string(pid) + "-1" + mine.substr(mine.rfind('-'));
}

}  // namespace mlens::test
