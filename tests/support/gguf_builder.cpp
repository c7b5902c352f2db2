#include "gguf_builder.h"

namespace mlens::test {

std::vector<uint8_t> t1_bytes() {
    GgufBuilder b;
    b.header(1, 1).kv_string("general.architecture", "llama").tensor_info("w", {32}, 0, 0).pad_to(32);
    for (int i = 0; i < 32; ++i) b.f32(static_cast<float>(i));
    return b.bytes;
}

}  // namespace mlens::test
