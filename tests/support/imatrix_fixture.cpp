#include "imatrix_fixture.h"

#include "gguf_builder.h"

namespace mlens::test {

std::vector<uint8_t> gguf_imatrix_bytes(const std::vector<ImatrixFixtureEntry>& entries, const std::vector<std::string>& datasets,
                                        uint32_t chunk_count, uint32_t chunk_size) {
    constexpr uint32_t kF32 = 0;
    auto padded = [](uint64_t n) { return (n + 31) / 32 * 32; };
    GgufBuilder b;
    b.header(2 * entries.size(), 4);
    b.kv_string("general.type", "imatrix");
    b.kv_strings("imatrix.datasets", datasets);
    b.kv_u32("imatrix.chunk_count", chunk_count);
    b.kv_u32("imatrix.chunk_size", chunk_size);
    uint64_t offset = 0;
    for (const ImatrixFixtureEntry& e : entries) {
        const uint64_t experts = e.counts.size();
        b.tensor_info(e.name + ".in_sum2", {e.columns, experts}, kF32, offset);
        offset += padded(e.sums.size() * 4);
        b.tensor_info(e.name + ".counts", {1, experts}, kF32, offset);
        offset += padded(experts * 4);
    }
    b.pad_to(32);
    for (const ImatrixFixtureEntry& e : entries) {
        for (float v : e.sums) b.f32(v);
        b.pad_to(32);
        for (float v : e.counts) b.f32(v);
        b.pad_to(32);
    }
    return b.bytes;
}

std::vector<uint8_t> legacy_imatrix_bytes(const std::vector<ImatrixFixtureEntry>& entries, int32_t chunk_count,
                                          const std::string& dataset) {
    GgufBuilder b;
    b.u32(static_cast<uint32_t>(entries.size()));
    for (const ImatrixFixtureEntry& e : entries) {
        b.u32(static_cast<uint32_t>(e.name.size())).text(e.name);
        b.u32(static_cast<uint32_t>(static_cast<int32_t>(e.counts.at(0))));
        b.u32(static_cast<uint32_t>(e.sums.size()));
        for (float v : e.sums) b.f32(v);
    }
    b.u32(static_cast<uint32_t>(chunk_count));
    b.u32(static_cast<uint32_t>(dataset.size())).text(dataset);
    return b.bytes;
}

}  // namespace mlens::test
