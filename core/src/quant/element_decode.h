// Element-wise dtypes (one value per fixed number of bytes) shared by GGUF's plain types and
// safetensors dtypes, decoded to float. Internal to core/quant.
#pragma once

#include <cstdint>
#include <optional>

#include "mlens/model/model.h"
#include "mlens/quant/float_source.h"

namespace mlens {

enum class ElementType {
    f64,
    f32,
    f16,
    bf16,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    boolean,
    f8_e4m3,
    f8_e5m2,
    f8_e8m0,
};

uint32_t element_bytes(ElementType t);

// The element type of a stored tensor, or nullopt when its type is not element-wise (GGUF block
// types, safetensors F4/F6/FNUZ/C64, unknown ids).
std::optional<ElementType> element_type_of(Format format, const StorageType& type);

// Little-endian input; `count` values. BOOL is 1 for any non-zero byte.
void decode_elements(ElementType t, const uint8_t* in, uint64_t count, float* out);

// Whether float rounds this type's values (I32, I64, U32, U64: integer; F64: float64) or not (none).
WideKind wide_kind_of(ElementType t);
// Little-endian input of a type whose wide_kind_of is not none; `count` values, exactly.
void decode_wide_elements(ElementType t, const uint8_t* in, uint64_t count, long double* out);

}  // namespace mlens
