#include "gguf_builder.h"

namespace mlens::test {

namespace {

std::vector<uint8_t> build_t1(bool big_endian, uint64_t extra_kvs, const std::function<void(GgufBuilder&)>& extra) {
    GgufBuilder b;
    b.big_endian = big_endian;
    b.header(1, 1 + extra_kvs).kv_string("general.architecture", "llama");
    if (extra) extra(b);
    b.tensor_info("w", {32}, 0, 0).pad_to(32);
    b.f32_run(32);
    return b.bytes;
}

}  // namespace

std::vector<uint8_t> t1_bytes() { return build_t1(false, 0, nullptr); }

std::vector<uint8_t> t1_plus_kvs(uint64_t extra_kvs, const std::function<void(GgufBuilder&)>& extra) {
    return build_t1(false, extra_kvs, extra);
}

std::vector<uint8_t> t1_big_endian_bytes() { return build_t1(true, 0, nullptr); }

}  // namespace mlens::test
