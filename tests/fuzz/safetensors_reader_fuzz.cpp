// libFuzzer target: arbitrary bytes through the safetensors reader, the Ollama tensor-blob pass
// (quantization metadata, combined tensors, expert groups) and everything that reads the
// resulting Model (JSON dump, summaries, tensor decoding of the first tensors).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_pipelines.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/model/model_json.h"
#include "mlens/model/summary.h"
#include "mlens/ollama/tensor_blobs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mlens;
    Model model = read_safetensors(memory_source(std::vector<uint8_t>(data, data + size)));
    describe_tensor_blobs(model, {"model.layers.0.mlp.experts"});
    (void)json_text(model_to_json(model, 16));
    (void)summarize(model);
    (void)summarize_layers(model);
    fuzz::decode_first_tensors(model);
    return 0;
}
