#include "mlens/formats/open_model.h"

#include "mlens/formats/gguf_reader.h"

namespace mlens {

Result<Model> open_model(const std::string& path, JobContext* job) {
    return open_gguf(path, GgufLimits{}, job);
}

}  // namespace mlens
