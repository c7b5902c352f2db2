#include "mlens/util/build_info.h"

#include "mlens/infer/llama_log.h"

namespace mlens {

const char* modellens_version() { return MLENS_VERSION; }

std::string version_text(std::string_view program) {
    return std::string(program) + " " + modellens_version() + " (git " + modellens_revision() + ")\n" + llama_cpp_version();
}

}  // namespace mlens
