#include "mlens/text/utf8.h"

#include <immintrin.h>

#include <cstring>

#include "util/cpu_features.h"

namespace mlens {

size_t utf8_decode(std::string_view s, uint32_t& cp) {
    if (s.empty()) return 0;
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    if (p[0] < 0x80) {
        cp = p[0];
        return 1;
    }
    const size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || p[0] > 0xF4 || len > s.size()) return 0;
    uint32_t v = p[0] & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
        if ((p[k] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (p[k] & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < kMin[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    cp = v;
    return len;
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | cp >> 6);
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | cp >> 12);
        out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | cp >> 18);
        out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
        out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// A table-driven validator (Unicode Table 3-7, well-formed byte sequences) with no data-dependent
// branches. The 9-state automaton is packed into one 64-bit row per byte value: state s (stored
// as s*6) moves to (row[byte] >> state) & 63, so the loop's dependency chain is one shift.
namespace {

enum : uint8_t { kAccept = 0, kReject = 8 };

constexpr uint8_t byte_class(unsigned b) {
    return b < 0x80 ? 0
        : b < 0x90  ? 1
        : b < 0xA0  ? 2
        : b < 0xC0  ? 3
        : b < 0xC2  ? 4
        : b < 0xE0  ? 5
        : b == 0xE0 ? 6
        : b == 0xED ? 8
        : b < 0xF0  ? 7
        : b == 0xF0 ? 9
        : b < 0xF4  ? 10
        : b == 0xF4 ? 11
                    : 4;
}

struct Utf8Tables {
    uint8_t next[9][12];
    uint64_t rows[256];
    constexpr Utf8Tables() : next{}, rows{} {
        for (auto& row : next)
            for (auto& cell : row) cell = kReject;
        // state 0: start of a character
        next[0][0] = 0;
        next[0][5] = 1;
        next[0][6] = 3;
        next[0][7] = 2;
        next[0][8] = 4;
        next[0][9] = 5;
        next[0][10] = 6;
        next[0][11] = 7;
        for (int c = 1; c <= 3; ++c) {
            next[1][c] = 0;  // one continuation byte left
            next[2][c] = 1;  // two left
            next[6][c] = 2;  // three left (after F1-F3)
        }
        next[3][3] = 1;  // after E0: A0-BF
        next[4][1] = next[4][2] = 1;  // after ED: 80-9F
        next[5][2] = next[5][3] = 2;  // after F0: 90-BF
        next[7][1] = 2;  // after F4: 80-8F
        for (unsigned b = 0; b < 256; ++b)
            for (unsigned state = 0; state < 9; ++state) rows[b] |= static_cast<uint64_t>(next[state][byte_class(b)] * 6) << (state * 6);
    }
};

constexpr Utf8Tables kUtf8;

// Vector validation after Keiser and Lemire, "Validating UTF-8 in less than one instruction per
// byte" (2021): every pair (previous byte, byte) is classified by three 16-entry lookups (high and
// low nibble of the previous byte, high nibble of the byte) whose AND has a bit set for each rule
// the pair breaks; a continuation after a continuation (kTwoConts) is an error exactly when the
// byte two or three back is not a 3- or 4-byte lead. It accepts exactly the texts the automaton
// above accepts (tests/unit/utf8_test.cpp compares it with a decoder loop at every block
// position). utf8_valid takes it for texts of kVectorMinBytes or more where the CPU has AVX2 (and
// its AVX-512 form below where the CPU has AVX-512 BW and VBMI).
constexpr uint8_t kTooShort = 1 << 0;  // a lead byte not followed by a continuation
constexpr uint8_t kTooLong = 1 << 1;  // a continuation after ASCII
constexpr uint8_t kOverlong3 = 1 << 2;  // E0 80..9F
constexpr uint8_t kTooLarge = 1 << 3;  // F4 90..BF, F5..FF 90..BF
constexpr uint8_t kSurrogate = 1 << 4;  // ED A0..BF
constexpr uint8_t kOverlong2 = 1 << 5;  // C0, C1 before a continuation
constexpr uint8_t kTooLarge1000 = 1 << 6;  // F5..FF 80..8F
constexpr uint8_t kOverlong4 = 1 << 6;  // F0 80..8F
constexpr uint8_t kTwoConts = 1 << 7;  // a continuation after a continuation
constexpr uint8_t kCarry = kTooShort | kTooLong | kTwoConts;  // the low nibble plays no part

// clang-format off
alignas(32) constexpr uint8_t kPrevHigh[32] = {
    kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong,
    kTwoConts, kTwoConts, kTwoConts, kTwoConts,
    kTooShort | kOverlong2, kTooShort, kTooShort | kOverlong3 | kSurrogate, kTooShort | kTooLarge | kTooLarge1000 | kOverlong4,
    kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong,
    kTwoConts, kTwoConts, kTwoConts, kTwoConts,
    kTooShort | kOverlong2, kTooShort, kTooShort | kOverlong3 | kSurrogate, kTooShort | kTooLarge | kTooLarge1000 | kOverlong4};
constexpr uint8_t kLarge = kCarry | kTooLarge | kTooLarge1000;
alignas(32) constexpr uint8_t kPrevLow[32] = {
    kCarry | kOverlong3 | kOverlong2 | kOverlong4, kCarry | kOverlong2, kCarry, kCarry, kCarry | kTooLarge,
    kLarge, kLarge, kLarge, kLarge, kLarge, kLarge, kLarge, kLarge, kLarge | kSurrogate, kLarge, kLarge,
    kCarry | kOverlong3 | kOverlong2 | kOverlong4, kCarry | kOverlong2, kCarry, kCarry, kCarry | kTooLarge,
    kLarge, kLarge, kLarge, kLarge, kLarge, kLarge, kLarge, kLarge, kLarge | kSurrogate, kLarge, kLarge};
constexpr uint8_t kCont80 = kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge1000 | kOverlong4;
constexpr uint8_t kCont90 = kTooLong | kOverlong2 | kTwoConts | kOverlong3 | kTooLarge;
constexpr uint8_t kContA0 = kTooLong | kOverlong2 | kTwoConts | kSurrogate | kTooLarge;
alignas(32) constexpr uint8_t kHigh[32] = {
    kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort,
    kCont80, kCont90, kContA0, kContA0, kTooShort, kTooShort, kTooShort, kTooShort,
    kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort,
    kCont80, kCont90, kContA0, kContA0, kTooShort, kTooShort, kTooShort, kTooShort};
// clang-format on

class Utf8Avx2 {
public:
    __attribute__((target("avx2"))) Utf8Avx2() : m_prev(_mm256_setzero_si256()), m_error(_mm256_setzero_si256()) {}

    __attribute__((target("avx2"))) void add(__m256i input) {
        if (_mm256_movemask_epi8(input) == 0) {
            // ASCII: only a sequence left open at the end of the previous block can be wrong.
            m_error = _mm256_or_si256(m_error, _mm256_subs_epu8(m_prev, _mm256_load_si256(reinterpret_cast<const __m256i*>(kOpenAtEnd))));
        } else {
            const __m256i nibble = _mm256_set1_epi8(0x0F);
            const __m256i joined = _mm256_permute2x128_si256(m_prev, input, 0x21);
            const __m256i prev1 = _mm256_alignr_epi8(input, joined, 15);
            const __m256i prev2 = _mm256_alignr_epi8(input, joined, 14);
            const __m256i prev3 = _mm256_alignr_epi8(input, joined, 13);
            const __m256i broken = _mm256_and_si256(
                _mm256_and_si256(_mm256_shuffle_epi8(table(kPrevHigh), _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nibble)),
                                 _mm256_shuffle_epi8(table(kPrevLow), _mm256_and_si256(prev1, nibble))),
                _mm256_shuffle_epi8(table(kHigh), _mm256_and_si256(_mm256_srli_epi16(input, 4), nibble)));
            const __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8(static_cast<char>(0xE0 - 0x80)));
            const __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8(static_cast<char>(0xF0 - 0x80)));
            const __m256i continues = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8(static_cast<char>(0x80)));
            m_error = _mm256_or_si256(m_error, _mm256_xor_si256(continues, broken));
        }
        m_prev = input;
    }

    // After the last block: a zero block closes any sequence left open.
    __attribute__((target("avx2"))) bool valid() {
        add(_mm256_setzero_si256());
        return _mm256_testz_si256(m_error, m_error);
    }

private:
    // Bytes above these in the last three places of a block open a sequence the block does not end.
    alignas(32) static constexpr uint8_t kOpenAtEnd[32] = {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
                                                          255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
                                                          255, 255, 255, 255, 255, 255, 255, 0xF0 - 1, 0xE0 - 1, 0xC0 - 1};

    __attribute__((target("avx2"))) static __m256i table(const uint8_t* t) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(t)); }

    __m256i m_prev;
    __m256i m_error;
};

__attribute__((target("avx2"))) bool utf8_valid_avx2(const uint8_t* data, size_t size) {
    Utf8Avx2 check;
    size_t i = 0;
    for (; i + 32 <= size; i += 32) check.add(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i)));
    alignas(32) uint8_t tail[32] = {};
    std::memcpy(tail, data + i, size - i);
    check.add(_mm256_load_si256(reinterpret_cast<const __m256i*>(tail)));
    return check.valid();
}

// The same classification 64 bytes at a time with AVX-512: the bytes one, two and three places
// back come from one two-register byte permute (VBMI) of the previous block and this one.
#define MLENS_AVX512_UTF8 __attribute__((target("avx512f,avx512bw,avx512vbmi")))

struct Utf8Avx512Tables {
    alignas(64) uint8_t back[3][64];  // back[k - 1][i] picks byte i - k of (previous block, block)
    alignas(64) uint8_t open_at_end[64];
    alignas(64) uint8_t prev_high[64];  // the 16-entry tables, in each 128-bit lane
    alignas(64) uint8_t prev_low[64];
    alignas(64) uint8_t high[64];
    constexpr Utf8Avx512Tables() : back{}, open_at_end{}, prev_high{}, prev_low{}, high{} {
        for (int i = 0; i < 64; ++i) {
            prev_high[i] = kPrevHigh[i % 16];
            prev_low[i] = kPrevLow[i % 16];
            high[i] = kHigh[i % 16];
        }
        for (int k = 1; k <= 3; ++k)
            for (int i = 0; i < 64; ++i) back[k - 1][i] = static_cast<uint8_t>(64 + i - k);
        for (auto& b : open_at_end) b = 255;
        open_at_end[61] = 0xF0 - 1;
        open_at_end[62] = 0xE0 - 1;
        open_at_end[63] = 0xC0 - 1;
    }
};

constexpr Utf8Avx512Tables kAvx512;

class Utf8Avx512 {
public:
    MLENS_AVX512_UTF8 Utf8Avx512() : m_prev(_mm512_setzero_si512()), m_error(_mm512_setzero_si512()) {}

    MLENS_AVX512_UTF8 void add(__m512i input) {
        if (_mm512_movepi8_mask(input) == 0) {
            m_error = _mm512_or_si512(m_error, _mm512_subs_epu8(m_prev, _mm512_load_si512(kAvx512.open_at_end)));
        } else {
            const __m512i nibble = _mm512_set1_epi8(0x0F);
            const __m512i prev1 = _mm512_permutex2var_epi8(m_prev, _mm512_load_si512(kAvx512.back[0]), input);
            const __m512i prev2 = _mm512_permutex2var_epi8(m_prev, _mm512_load_si512(kAvx512.back[1]), input);
            const __m512i prev3 = _mm512_permutex2var_epi8(m_prev, _mm512_load_si512(kAvx512.back[2]), input);
            const __m512i broken = _mm512_and_si512(
                _mm512_and_si512(_mm512_shuffle_epi8(table(kAvx512.prev_high), _mm512_and_si512(_mm512_srli_epi16(prev1, 4), nibble)),
                                 _mm512_shuffle_epi8(table(kAvx512.prev_low), _mm512_and_si512(prev1, nibble))),
                _mm512_shuffle_epi8(table(kAvx512.high), _mm512_and_si512(_mm512_srli_epi16(input, 4), nibble)));
            const __m512i third = _mm512_subs_epu8(prev2, _mm512_set1_epi8(static_cast<char>(0xE0 - 0x80)));
            const __m512i fourth = _mm512_subs_epu8(prev3, _mm512_set1_epi8(static_cast<char>(0xF0 - 0x80)));
            const __m512i continues = _mm512_and_si512(_mm512_or_si512(third, fourth), _mm512_set1_epi8(static_cast<char>(0x80)));
            m_error = _mm512_or_si512(m_error, _mm512_xor_si512(continues, broken));
        }
        m_prev = input;
    }

    MLENS_AVX512_UTF8 bool valid() {
        add(_mm512_setzero_si512());
        return _mm512_test_epi8_mask(m_error, m_error) == 0;
    }

private:
    MLENS_AVX512_UTF8 static __m512i table(const uint8_t* t) { return _mm512_load_si512(t); }

    __m512i m_prev;
    __m512i m_error;
};

MLENS_AVX512_UTF8 bool utf8_valid_avx512(const uint8_t* data, size_t size) {
    Utf8Avx512 check;
    size_t i = 0;
    for (; i + 64 <= size; i += 64) check.add(_mm512_loadu_si512(data + i));
    check.add(_mm512_maskz_loadu_epi8((uint64_t{1} << (size - i)) - 1, data + i));
    return check.valid();
}

// Below this size the automaton's setup-free loop is faster than a vector pass.
constexpr size_t kVectorMinBytes = 64;

// The automaton alone: texts shorter than the vector pass needs, and CPUs without AVX2.
bool utf8_valid_scalar(const uint8_t* data, size_t size) {
    size_t i = 0;
    while (i + 8 <= size) {  // leading ASCII, 8 bytes at a time
        uint64_t w;
        std::memcpy(&w, data + i, 8);
        if (w & 0x8080808080808080ull) break;
        i += 8;
    }
    uint64_t state = kAccept;
    for (; i < size; ++i) state = (kUtf8.rows[data[i]] >> state) & 63;
    return state == kAccept;
}

}  // namespace

bool utf8_valid(const uint8_t* data, size_t size) {
    static const bool avx512 = vector_paths_allowed() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
    static const bool avx2 = vector_paths_allowed() && __builtin_cpu_supports("avx2");
    if (size < kVectorMinBytes) return utf8_valid_scalar(data, size);
    if (avx512) return utf8_valid_avx512(data, size);
    if (avx2) return utf8_valid_avx2(data, size);
    return utf8_valid_scalar(data, size);
}

bool utf8_valid(std::string_view s) { return utf8_valid(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

size_t utf8_first_invalid(std::string_view s) {
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    size_t i = 0;
    while (i < s.size()) {
        if (p[i] < 0x80) {
            ++i;
            uint64_t word;
            while (i + 8 <= s.size() && (std::memcpy(&word, p + i, 8), (word & 0x8080808080808080ull) == 0)) i += 8;
            continue;
        }
        uint32_t cp = 0;
        const size_t len = utf8_decode(s.substr(i), cp);
        if (len == 0) return i;
        i += len;
    }
    return s.size();
}

}  // namespace mlens
