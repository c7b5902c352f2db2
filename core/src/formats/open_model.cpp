#include "mlens/formats/open_model.h"

#include <sys/stat.h>

#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"

namespace mlens {

Result<Model> open_model(const std::string& path, JobContext* job) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return open_safetensors_folder(path, {}, job);
    auto source = open_file(path);
    if (!source) return source.error();
    uint8_t magic[4];
    bool gguf_magic = (*source)->read(0, 4, magic) && magic[0] == 'G' && magic[1] == 'G' && magic[2] == 'U' && magic[3] == 'F';
    if (!gguf_magic && looks_like_safetensors(**source)) return read_safetensors(*source, {}, job);
    return open_gguf(path, GgufLimits{}, job);
}

}  // namespace mlens
