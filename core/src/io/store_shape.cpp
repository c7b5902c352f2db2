#include "mlens/io/store_shape.h"

#include <sys/stat.h>

namespace mlens {

namespace {

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

bool is_store_root(const std::string& path) { return is_directory(path) && is_directory(path + "/manifests"); }

bool is_blob_file_name(std::string_view name) {
    constexpr std::string_view kPrefix = "sha256-";
    constexpr size_t kHexDigits = 64;
    if (name.size() != kPrefix.size() + kHexDigits || !name.starts_with(kPrefix)) return false;
    for (char c : name.substr(kPrefix.size()))
        if (!is_lower_hex(c)) return false;
    return true;
}

}  // namespace mlens
