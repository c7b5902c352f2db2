#include "mlens/util/build_info.h"

#include <ggml.h>

namespace mlens {

const char* modellens_version() { return MLENS_VERSION; }

std::string llama_cpp_version() {
    return std::string("llama.cpp " MLENS_LLAMA_RELEASE " \xC2\xB7 ggml ") + ggml_version() + " (" + ggml_commit() + ")";
}

std::string version_text(std::string_view program) {
    return std::string(program) + " " + modellens_version() + " (git " + modellens_revision() + ")\n" + llama_cpp_version();
}

}  // namespace mlens
