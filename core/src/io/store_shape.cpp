#include "mlens/io/store_shape.h"

#include <sys/stat.h>

#include "mlens/text/digits.h"

namespace mlens {

namespace {

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

bool is_store_root(const std::string& path) { return is_directory(path) && is_directory(path + "/manifests"); }

bool is_blob_file_name(std::string_view name) {
    constexpr std::string_view kPrefix = "sha256-";
    constexpr size_t kHexDigits = 64;
    return name.size() == kPrefix.size() + kHexDigits && name.starts_with(kPrefix) && all_lower_hex_digits(name.substr(kPrefix.size()));
}

}  // namespace mlens
