#include "element_decode.h"

#include <ggml.h>

#include <cassert>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "mlens/formats/ggml_type_table.h"
#include "mlens/formats/safetensors_dtype.h"
#include "mlens/quant/minifloat.h"
#include "util/cpu_features.h"

namespace mlens {

namespace {

template <typename T, typename Out = float>
void convert(const uint8_t* in, uint64_t count, Out* out) {
    for (uint64_t i = 0; i < count; ++i) {
        T v;
        std::memcpy(&v, in + i * sizeof(T), sizeof(T));
        out[i] = static_cast<Out>(v);
    }
}

void table(const uint8_t* in, uint64_t count, float* out, float (*fn)(uint8_t)) {
    for (uint64_t i = 0; i < count; ++i) out[i] = fn(in[i]);
}

float e8m0_nan(uint8_t b) { return e8m0_value(b, E8m0Nan::nan); }

// float16 to float32 is exact, so the CPU's F16C conversion (eight values an instruction) gives
// ggml's values bit for bit, NaN payloads included (a test checks all 65536 codes); CPUs without
// it use ggml's row conversion.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx,f16c"))) void half_to_float_f16c(const uint8_t* in, uint64_t count, float* out) {
    uint64_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i))));
    for (; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = _cvtsh_ss(h);
    }
}

// F16C is CPUID leaf 1, ECX bit 29; AVX says the OS saves the YMM registers it uses. (Asked of
// CPUID directly: clang's __builtin_cpu_supports does not know "f16c".)
bool cpu_has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    return (ecx & (1u << 29)) != 0 && __builtin_cpu_supports("avx");
}
#endif

void half_to_float(const uint8_t* in, uint64_t count, float* out) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool f16c = vector_paths_allowed() && cpu_has_f16c();
    if (f16c) return half_to_float_f16c(in, count, out);
#endif
    ggml_fp16_to_fp32_row(reinterpret_cast<const ggml_fp16_t*>(in), out, static_cast<int64_t>(count));
}

// The decoder of a ggml element type.
std::optional<ElementType> decoder_of(GgmlElement e) {
    switch (e) {
        case GgmlElement::f32:
            return ElementType::f32;
        case GgmlElement::f16:
            return ElementType::f16;
        case GgmlElement::bf16:
            return ElementType::bf16;
        case GgmlElement::f64:
            return ElementType::f64;
        case GgmlElement::i8:
            return ElementType::i8;
        case GgmlElement::i16:
            return ElementType::i16;
        case GgmlElement::i32:
            return ElementType::i32;
        case GgmlElement::i64:
            return ElementType::i64;
        case GgmlElement::none:
            break;
    }
    return std::nullopt;
}

}  // namespace

uint32_t element_bytes(ElementType t) {
    switch (t) {
        case ElementType::f64:
        case ElementType::i64:
        case ElementType::u64:
            return 8;
        case ElementType::f32:
        case ElementType::i32:
        case ElementType::u32:
            return 4;
        case ElementType::f16:
        case ElementType::bf16:
        case ElementType::i16:
        case ElementType::u16:
            return 2;
        default:
            return 1;
    }
}

std::optional<ElementType> element_type_of(Format format, const StorageType& type) {
    if (!type.known) return std::nullopt;
    if (format == Format::gguf) {
        const GgmlTypeRow* row = ggml_type_row(type.id);
        return row ? decoder_of(row->element) : std::nullopt;
    }
    if (format != Format::safetensors || type.id >= kSafetensorsDtypeCount) return std::nullopt;
    switch (static_cast<SafetensorsDtype>(type.id)) {
        case SafetensorsDtype::f64:
            return ElementType::f64;
        case SafetensorsDtype::f32:
            return ElementType::f32;
        case SafetensorsDtype::f16:
            return ElementType::f16;
        case SafetensorsDtype::bf16:
            return ElementType::bf16;
        case SafetensorsDtype::i8:
            return ElementType::i8;
        case SafetensorsDtype::i16:
            return ElementType::i16;
        case SafetensorsDtype::i32:
            return ElementType::i32;
        case SafetensorsDtype::i64:
            return ElementType::i64;
        case SafetensorsDtype::u8:
            return ElementType::u8;
        case SafetensorsDtype::u16:
            return ElementType::u16;
        case SafetensorsDtype::u32:
            return ElementType::u32;
        case SafetensorsDtype::u64:
            return ElementType::u64;
        case SafetensorsDtype::boolean:
            return ElementType::boolean;
        case SafetensorsDtype::f8_e4m3:
            return ElementType::f8_e4m3;
        case SafetensorsDtype::f8_e5m2:
            return ElementType::f8_e5m2;
        case SafetensorsDtype::f8_e8m0:
            return ElementType::f8_e8m0;
        default:
            return std::nullopt;
    }
}

void decode_elements(ElementType t, const uint8_t* in, uint64_t count, float* out) {
    switch (t) {
        case ElementType::f64:
            return convert<double>(in, count, out);
        case ElementType::f32:
            std::memcpy(out, in, count * 4);
            return;
        case ElementType::f16:
            return half_to_float(in, count, out);
        case ElementType::bf16:
            ggml_bf16_to_fp32_row(reinterpret_cast<const ggml_bf16_t*>(in), out, static_cast<int64_t>(count));
            return;
        case ElementType::i8:
            return convert<int8_t>(in, count, out);
        case ElementType::i16:
            return convert<int16_t>(in, count, out);
        case ElementType::i32:
            return convert<int32_t>(in, count, out);
        case ElementType::i64:
            return convert<int64_t>(in, count, out);
        case ElementType::u8:
            return convert<uint8_t>(in, count, out);
        case ElementType::u16:
            return convert<uint16_t>(in, count, out);
        case ElementType::u32:
            return convert<uint32_t>(in, count, out);
        case ElementType::u64:
            return convert<uint64_t>(in, count, out);
        case ElementType::boolean:
            for (uint64_t i = 0; i < count; ++i) out[i] = in[i] ? 1.0f : 0.0f;
            return;
        case ElementType::f8_e4m3:
            return table(in, count, out, e4m3_value);
        case ElementType::f8_e5m2:
            return table(in, count, out, e5m2_value);
        case ElementType::f8_e8m0:
            return table(in, count, out, e8m0_nan);
    }
}

WideKind wide_kind_of(ElementType t) {
    switch (t) {
        case ElementType::i32:
        case ElementType::i64:
        case ElementType::u32:
        case ElementType::u64:
            return WideKind::integer;
        case ElementType::f64:
            return WideKind::float64;
        default:
            return WideKind::none;
    }
}

void decode_wide_elements(ElementType t, const uint8_t* in, uint64_t count, long double* out) {
    switch (t) {
        case ElementType::i32:
            return convert<int32_t>(in, count, out);
        case ElementType::i64:
            return convert<int64_t>(in, count, out);
        case ElementType::u32:
            return convert<uint32_t>(in, count, out);
        case ElementType::u64:
            return convert<uint64_t>(in, count, out);
        case ElementType::f64:
            return convert<double>(in, count, out);
        default:
            assert(false && "not a wide type");
            return;
    }
}

}  // namespace mlens
