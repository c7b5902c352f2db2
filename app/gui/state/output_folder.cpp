#include "output_folder.h"

#include <filesystem>

namespace mlens {

namespace fs = std::filesystem;

std::string default_output_folder(const char* home) {
    std::error_code ec;
    if (home && *home) {
        const fs::path downloads = fs::path(home) / "Downloads";
        if (fs::is_directory(downloads, ec)) return downloads.string();
        if (fs::is_directory(home, ec)) return fs::path(home).lexically_normal().string();
    }
    const fs::path here = fs::current_path(ec);
    return ec ? std::string(".") : here.string();
}

std::string output_folder_for(const std::string& source, const char* home) {
    std::error_code ec;
    const fs::path ext = fs::path(source).extension();
    if ((ext == ".gguf" || ext == ".safetensors") && fs::is_regular_file(source, ec)) {
        const fs::path folder = fs::absolute(source, ec).parent_path();
        if (!ec && !folder.empty()) return folder.string();
    }
    return default_output_folder(home);
}

std::string with_folder(const std::string& path, const std::string& folder) {
    fs::path name = fs::path(path).filename();
    if (name.empty()) name = fs::path(path).parent_path().filename();  // "dir/" names "dir"
    return (fs::path(folder) / name).string();
}

}  // namespace mlens
