// safetensors dtypes: the 22 names of malformed-inputs.md A3, their sizes in bits, and how a
// tensor of each is described in the Model.
//
// Contract:
//  - Names are matched exactly (case-sensitive); anything else is not a dtype.
//  - SafetensorsDtype values are the StorageType ids of safetensors tensors. They are stable:
//    the position of the dtype in the spec table (BOOL = 0 ... U64 = 21), never reused or
//    reordered, and unrelated to ggml type ids (Model::format tells the id spaces apart).
//  - StorageType: name = the dtype string, known = true. block_size is 1 and block_bytes the
//    element size, except for the sub-byte dtypes, whose block is the fewest elements that fill
//    whole bytes (F4: 2 elements in 1 byte; F6_*: 4 elements in 3 bytes). safetensors packs
//    those bits over the flattened tensor, so a row need not start on a block boundary.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "mlens/model/model.h"

namespace mlens {

enum class SafetensorsDtype : uint32_t {
    boolean = 0,
    f4 = 1,
    f6_e2m3 = 2,
    f6_e3m2 = 3,
    u8 = 4,
    i8 = 5,
    f8_e5m2 = 6,
    f8_e4m3 = 7,
    f8_e8m0 = 8,
    f8_e4m3fnuz = 9,
    f8_e5m2fnuz = 10,
    i16 = 11,
    u16 = 12,
    f16 = 13,
    bf16 = 14,
    i32 = 15,
    u32 = 16,
    f32 = 17,
    c64 = 18,
    f64 = 19,
    i64 = 20,
    u64 = 21,
};
constexpr uint32_t kSafetensorsDtypeCount = 22;

std::optional<SafetensorsDtype> safetensors_dtype_from_name(std::string_view name);
const char* safetensors_dtype_name(SafetensorsDtype d);  // "BOOL", "F8_E4M3", ...
uint32_t safetensors_dtype_bits(SafetensorsDtype d);  // 4, 6, 8, 16, 32 or 64
StorageType safetensors_storage_type(SafetensorsDtype d);

}  // namespace mlens
