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

bool avx512_paths_allowed() {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool allowed = vector_paths_allowed() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    return allowed;
#else
    return false;
#endif
}

}  // namespace mlens
