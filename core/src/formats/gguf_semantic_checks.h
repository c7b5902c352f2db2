// Checks of what GGUF metadata means, for the keys the app and the CLI read: the tokenizer
// arrays (types, lengths, ids in range, merges, byte tokens), split metadata, and the
// hyperparameters on which the pinned llama.cpp aborts instead of refusing the file (W_LLAMA_ABORT,
// from the table in formats/llama_asserts.h). Everything found here is a warning naming
// the key (malformed-inputs.md G57, G58): the file is valid GGUF, but a loader or a view would
// misread it. Viewers must still check before indexing.
//
// general.file_type (W_FILE_TYPE_LABEL): llama.cpp and Ollama show this label as the file's
// quantization, and nothing checks it against the tensors. Decision: the label is called wrong
// only when it cannot be the tensors' ftype: no matrix (a tensor of two or more dimensions, not
// F32, not quantized per tensor) holds the ftype's base type (the ggml type whose ftype names
// include it, ggml_type_table.h: Q4_K for Q4_K_M, IQ3_S for IQ3_XS), while at least half of the
// matrices could hold it (their rows a whole number of that type's blocks). llama-quantize gives
// the base type to the matrices whose rows allow it, bumps a few kinds to a wider type in its
// mixes (ffn_down, attn_v, output), and falls back to another type (Q5_0 for Q4_K, Q8_0 for
// Q6_K, IQ4_NL for the IQ types) where the rows do not allow it: a model whose only wide matrices
// are the bumped ones (Qwen2.5-0.5B's 896-wide rows beside its 4864-wide ffn_down, under Q3_K_M)
// holds no matrix of the base type, so fewer than half that could is never called wrong. Its
// mixes, its fallbacks and a model too narrow for the base type's blocks draw no warning. MXFP4_MOE gives MXFP4 to the
// experts' matrices only (names with "_exps"; Q8_0 to the rest): only those are counted, so a
// dense model quantized with it (all Q8_0) draws none. F32, removed ftypes and GUESSED are not
// checked. A split part read alone is checked on its own matrices.
#pragma once

#include <algorithm>
#include <cstring>
#include <emmintrin.h>
#include <optional>
#include <string_view>

#include "mlens/formats/gguf_limits.h"
#include "mlens/model/model.h"

namespace mlens {

void check_gguf_semantics(Model& model, const GgufLimits& limits);

// A check run on each element of a string array while the reader indexes it, so that 100k-1M
// element vocabularies are scanned once (tokenizer.ggml.tokens: byte tokens must be exactly
// <0xNN>; tokenizer.ggml.merges: two parts separated by a space). The first element that fails
// is reported. The visits are inline and cheap: the reader makes one for every element.
class StringArrayCheck {
public:
    enum class Rule { merge_has_space, byte_token_form };
    explicit StringArrayCheck(Rule rule) : m_rule(rule) {}

    // Sees element `index`, cut to at most kMaxVisitBytes bytes; elements come in index order.
    void visit(uint64_t index, std::string_view element) {
        if (!m_failed && !passes(element)) m_failed = index;
    }
    // Elements of at most this many bytes are checked by passes_short_as, which reads this many
    // bytes from their start (the element may be shorter) without a branch on the length
    // (vocabulary elements are short and their lengths unpredictable).
    static constexpr uint64_t kReadableBytes = 32;
    // The check of an element of at most kReadableBytes bytes at `text` (from which kReadableBytes
    // bytes may be read) under rule R, for a caller that keeps the first failure itself and hands
    // it to note_failure.
    template <Rule R>
    static bool passes_short_as(const uint8_t* text, uint64_t length) {
        if constexpr (R == Rule::merge_has_space) {
            // One bit per byte that is a space, of the first `length` bytes (SSE2, every x86-64 CPU).
            const __m128i space = _mm_set1_epi8(' ');
            const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text));
            const __m128i high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text + 16));
            const uint64_t spaces = static_cast<uint64_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(low, space))) |
                                    static_cast<uint64_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(high, space))) << 16;
            return (spaces & ((uint64_t{1} << length) - 1)) != 0;
        } else {
            const bool looks_like_byte = (length - 4 <= 4) & (text[0] == '<') & (text[1] == '0') & (text[2] == 'x') &
                                         (text[length == 0 ? 0 : length - 1] == '>');
            return !looks_like_byte || is_byte_token(std::string_view(reinterpret_cast<const char*>(text), length));
        }
    }
    Rule rule() const { return m_rule; }
    // Adds the warning, if any, about entry `e` to the model.
    void finish(Model& model, const MetadataEntry& e) const;

    // For a part of the array checked apart (gguf_string_split.h): a check of the same rule that
    // has seen nothing, and the first element this one found failing. note_failure records a
    // failure found elsewhere; the first failure is the least index recorded.
    StringArrayCheck fresh() const { return StringArrayCheck(m_rule); }
    std::optional<uint64_t> first_failure() const { return m_failed; }
    void note_failure(uint64_t index) {
        if (!m_failed || index < *m_failed) m_failed = index;
    }
    static constexpr uint64_t kMaxVisitBytes = 4096;

private:
    bool passes(std::string_view element) const {
        if (m_rule == Rule::merge_has_space) return element.find(' ') != std::string_view::npos;
        const bool looks_like_byte = element.size() >= 4 && element.size() <= 8 && element.starts_with("<0x") && element.back() == '>';
        return !looks_like_byte || is_byte_token(element);
    }
    static bool is_byte_token(std::string_view piece);

    Rule m_rule;
    std::optional<uint64_t> m_failed;
};

// The check for a key, or nullopt when its elements need none.
std::optional<StringArrayCheck> string_array_check_for(std::string_view key);

// Parses a byte token "<0xNN>" strictly (exactly two upper- or lower-case hex digits).
bool parse_byte_token(std::string_view piece, uint8_t& byte);

}  // namespace mlens
