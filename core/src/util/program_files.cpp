#include "mlens/util/program_files.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace mlens {

namespace {

// bin/ → prefix is one level; the deepest build-folder programs (tests/bench/, tests/fuzz/)
// are two below the build root; one more level of slack, and no further, so a program never
// picks up files of an unrelated tree higher up.
constexpr int kAncestorsSearched = 3;

bool executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

}  // namespace

std::string running_executable() {
    std::error_code ec;
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : self.string();
}

std::string program_file(std::string_view installed, std::string_view build_tree) {
    const std::string self = running_executable();
    if (self.empty()) return {};
    std::filesystem::path folder = std::filesystem::path(self).parent_path();
    for (int level = 0; level <= kAncestorsSearched; ++level) {
        std::error_code ec;
        for (std::string_view relative : {installed, build_tree}) {
            std::filesystem::path candidate = folder / relative;
            if (!relative.empty() && std::filesystem::exists(candidate, ec)) return candidate.string();
        }
        if (!folder.has_parent_path() || folder.parent_path() == folder) break;
        folder = folder.parent_path();
    }
    return {};
}

std::string helper_program(const char* env_var, std::string_view file_name, std::string_view installed, std::string_view build_tree) {
    if (const char* env = std::getenv(env_var); env && executable(env)) return env;
    const std::string self = running_executable();
    if (!self.empty()) {
        std::string beside = (std::filesystem::path(self).parent_path() / file_name).string();
        if (executable(beside)) return beside;
    }
    std::string found = program_file(installed, build_tree);
    return executable(found) ? found : std::string();
}

}  // namespace mlens
