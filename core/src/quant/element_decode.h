// Element-wise dtypes (one value per fixed number of bytes) shared by GGUF's plain types and
// safetensors dtypes, decoded to float. Internal to core/quant.
#pragma once

#include <cstdint>
#include <optional>

#include "mlens/model/model.h"

namespace mlens {

enum class ElementType {
    f64, f32, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64, boolean, f8_e4m3, f8_e5m2, f8_e8m0,
};

uint32_t element_bytes(ElementType t);

// The element type of a stored tensor, or nullopt when its type is not element-wise (GGUF block
// types, safetensors F4/F6/FNUZ/C64, unknown ids).
std::optional<ElementType> element_type_of(Format format, const StorageType& type);

// Little-endian input; `count` values. BOOL is 1 for any non-zero byte.
void decode_elements(ElementType t, const uint8_t* in, uint64_t count, float* out);

}  // namespace mlens
