#include "mlens/formats/safetensors_dtype.h"

namespace mlens {

namespace {

struct DtypeRow {
    std::string_view name;
    uint32_t bits;
};

// Indexed by SafetensorsDtype.
constexpr DtypeRow kDtypes[kSafetensorsDtypeCount] = {
    {"BOOL", 8},    {"F4", 4},          {"F6_E2M3", 6},     {"F6_E3M2", 6}, {"U8", 8},   {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8},
    {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16}, {"F16", 16}, {"BF16", 16},   {"I32", 32},
    {"U32", 32},    {"F32", 32},        {"C64", 64},        {"F64", 64},    {"I64", 64}, {"U64", 64},
};

}  // namespace

std::optional<SafetensorsDtype> safetensors_dtype_from_name(std::string_view name) {
    for (uint32_t i = 0; i < kSafetensorsDtypeCount; ++i)
        if (name == kDtypes[i].name) return static_cast<SafetensorsDtype>(i);
    return std::nullopt;
}

const char* safetensors_dtype_name(SafetensorsDtype d) { return kDtypes[static_cast<uint32_t>(d)].name.data(); }

uint32_t safetensors_dtype_bits(SafetensorsDtype d) { return kDtypes[static_cast<uint32_t>(d)].bits; }

StorageType safetensors_storage_type(SafetensorsDtype d) {
    StorageType t;
    t.id = static_cast<uint32_t>(d);
    t.name = kDtypes[static_cast<uint32_t>(d)].name;
    t.known = true;
    uint32_t bits = safetensors_dtype_bits(d);
    // Smallest element count whose bits are a whole number of bytes: 8 / gcd(bits, 8).
    t.block_size = bits % 8 == 0 ? 1 : bits % 4 == 0 ? 2 : 4;
    t.block_bytes = t.block_size * bits / 8;
    return t;
}

}  // namespace mlens
