#include "ollama_store_checks.h"

#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace mlens::test {

StoreCheckReport check_root(const std::string& root, double max_seconds) {
    auto store = Store::open(root);
    REQUIRE(store.ok());
    auto start = std::chrono::steady_clock::now();
    StoreCheckReport r = check_store(*store).value;
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < max_seconds);
    return r;
}

std::string describe(const StoreCheckReport& r) {
    std::string out;
    for (const Diagnostic& d : r.diagnostics) out += d.to_line() + "\n";
    for (const ModelCheck& m : r.models)
        out += m.name.display() + ": " + std::to_string(m.errors) + " errors, " + std::to_string(m.warnings) + " warnings\n";
    return out.empty() ? "(nothing)" : out;
}

const ModelCheck* find_model(const StoreCheckReport& r, const std::string& display_name) {
    for (const ModelCheck& m : r.models)
        if (m.name.display() == display_name) return &m;
    return nullptr;
}

Diagnostic require_evil_rejected(const StoreCheckReport& r, const std::string& code, const std::string& field,
                                 std::optional<uint64_t> offset) {
    INFO("report:\n" << describe(r));
    auto it = std::find_if(r.diagnostics.begin(), r.diagnostics.end(), [&](const Diagnostic& d) {
        return d.severity == Severity::error && code_name(d.code) == code && d.field == field;
    });
    REQUIRE(it != r.diagnostics.end());
    if (offset) CHECK(it->offset == offset);
    CHECK(!it->message.empty());
    const ModelCheck* evil = find_model(r, "evil:latest");
    REQUIRE(evil != nullptr);
    CHECK(evil->errors > 0);
    const ModelCheck* tiny = find_model(r, "tiny:latest");
    REQUIRE(tiny != nullptr);
    CHECK(tiny->errors == 0);
    return *it;
}

void require_store_accepted(const StoreCheckReport& r, const std::vector<std::string>& warnings) {
    INFO("report:\n" << describe(r));
    REQUIRE(r.error_count() == 0);
    CHECK(find_model(r, "tiny:latest") != nullptr);
    for (const std::string& w : warnings) {
        bool found = std::any_of(r.diagnostics.begin(), r.diagnostics.end(), [&](const Diagnostic& d) { return code_name(d.code) == w; });
        CHECK(found);
        if (!found) WARN("missing warning " << w);
    }
}

std::vector<std::string> tree_snapshot(const std::string& root) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec)) {
        struct stat st {};
        std::string path = it->path().string();
        if (::lstat(path.c_str(), &st) != 0) continue;
        std::string line = path + " mode=" + std::to_string(st.st_mode) + " size=" + std::to_string(st.st_size) +
            " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
        if (S_ISLNK(st.st_mode)) line += " -> " + std::filesystem::read_symlink(it->path(), ec).string();
        out.push_back(line);
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace mlens::test
