#include "mlens/util/program_files.h"

#include <filesystem>
#include <system_error>

namespace mlens {

namespace {

// bin/ → prefix is one level; the deepest build-folder programs (tests/bench/, tests/fuzz/)
// are two below the build root; one more level of slack, and no further, so a program never
// picks up files of an unrelated tree higher up.
constexpr int kAncestorsSearched = 3;

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

}  // namespace mlens
