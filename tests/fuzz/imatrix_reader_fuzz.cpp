// libFuzzer target: arbitrary bytes through the importance-matrix detection and reader (GGUF and
// legacy layouts), the summary of each of the first entries and the importance a tensor of the
// entry's shape would be quantized with.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mlens/quant/imatrix.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mlens;
    ByteSourcePtr source = memory_source(std::vector<uint8_t>(data, data + size));
    (void)looks_like_imatrix(*source);
    Result<Imatrix> m = read_imatrix(source);
    if (!m) return 0;
    for (size_t i = 0; i < m->entries.size() && i < 8; ++i) {
        const ImatrixEntry& e = m->entries[i];
        (void)summarize_entry(*m, e, 16);
        (void)importance_for(*m, e.name, e.columns, e.experts, std::nullopt);
    }
    return 0;
}
