// libFuzzer target: arbitrary text through the Ollama manifest parser, the config-blob parser,
// the digest grammar and the model-reference parser — everything the store reads from JSON
// files written by others — and through what the store views make of text layers: the Go
// template reading behind capabilities and the readable-text formatter.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mlens/ollama/config_blob.h"
#include "mlens/ollama/digest.h"
#include "mlens/ollama/go_template.h"
#include "mlens/ollama/manifest.h"
#include "mlens/ollama/model_name.h"
#include "mlens/text/readable_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mlens;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    Manifest manifest = parse_manifest(text);
    (void)manifest.total_size();
    for (const ManifestLayer& layer : manifest.layers)
        if (layer.blob) (void)blob_file_name(*layer.blob);
    (void)parse_model_config(text);
    (void)parse_blob_digest(text);
    (void)classify_blob_file(text);
    (void)parse_model_reference(text);
    (void)short_digest(text);
    (void)read_go_template(text);
    (void)first_lines(readable_json(text), 8);
    return 0;
}
