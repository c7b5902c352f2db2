// libFuzzer target: arbitrary bytes through the GGUF reader, then through everything that reads
// a Model (JSON dump, value rendering, summaries, header writer, tensor decoding). Any crash,
// sanitizer report or unbounded allocation is a bug.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_pipelines.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/gguf_writer.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/model/value_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mlens;
    Model model = read_gguf(memory_source(std::vector<uint8_t>(data, data + size)));
    (void)json_text(model_to_json(model, 16));
    for (const MetadataEntry& e : model.metadata) (void)format_value(e.value);
    (void)summarize(model);
    (void)summarize_layers(model);
    if (model.error_count() == 0) {
        (void)gguf_header_bytes(model);
        fuzz::decode_first_tensors(model);
    }
    return 0;
}
