#include "cpu_features.h"

#include <cstdlib>
#include <cstring>

namespace mlens {

bool vector_paths_allowed() {
    static const bool allowed = [] {
        const char* value = std::getenv("MLENS_PORTABLE_PATHS");
        return value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0;
    }();
    return allowed;
}

}  // namespace mlens
