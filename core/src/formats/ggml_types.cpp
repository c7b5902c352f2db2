#include "mlens/formats/ggml_types.h"

#include <algorithm>
#include <cctype>

#include <ggml.h>

#include "mlens/formats/ggml_type_table.h"

namespace mlens {

uint32_t ggml_type_count() { return GGML_TYPE_COUNT; }

StorageType describe_ggml_type(uint32_t id) {
    StorageType t;
    t.id = id;
    if (const GgmlTypeRow* row = ggml_type_row(id)) {
        t.known = true;
        t.name = row->name;
        t.block_size = row->block_elements;
        t.block_bytes = row->block_bytes;
        return t;
    }
    t.name = "unknown(" + std::to_string(id) + ")";
    return t;
}

std::optional<uint32_t> ggml_type_from_name(const std::string& name) {
    const auto same = [](std::string_view a, std::string_view b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
            return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
        });
    };
    for (const GgmlTypeRow& row : ggml_type_rows())
        if (same(row.name, name)) return row.id;
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
