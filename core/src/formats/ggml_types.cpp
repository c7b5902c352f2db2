#include "mlens/formats/ggml_types.h"

#include <ggml.h>

#include <cctype>

namespace mlens {

uint32_t ggml_type_count() { return GGML_TYPE_COUNT; }

StorageType describe_ggml_type(uint32_t id) {
    StorageType t;
    t.id = id;
    // Range-check before ggml indexes its trait table; removed types have block size 0.
    if (id < GGML_TYPE_COUNT) {
        auto type = static_cast<ggml_type>(id);
        int64_t block = ggml_blck_size(type);
        if (block > 0) {
            t.known = true;
            t.name = ggml_type_name(type);
            for (char& c : t.name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            t.block_size = static_cast<uint64_t>(block);
            t.block_bytes = ggml_type_size(type);
            return t;
        }
    }
    t.name = "unknown(" + std::to_string(id) + ")";
    return t;
}

std::optional<uint32_t> ggml_type_from_name(const std::string& name) {
    for (uint32_t id = 0; id < GGML_TYPE_COUNT; ++id) {
        StorageType t = describe_ggml_type(id);
        if (t.known && t.name == name) return id;
    }
    return std::nullopt;
}

std::optional<uint64_t> ggml_tensor_bytes(const StorageType& type, uint64_t ne0, uint64_t n_elements) {
    if (!type.known || type.block_size == 0) return std::nullopt;
    if (ne0 % type.block_size != 0) return std::nullopt;
    uint64_t blocks = n_elements / type.block_size;  // ne0 divisible => n_elements divisible
    uint64_t bytes;
    if (__builtin_mul_overflow(blocks, type.block_bytes, &bytes)) return std::nullopt;
    return bytes;
}

}  // namespace mlens
