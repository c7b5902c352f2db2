// Checks of what GGUF metadata means, for the keys the app and the CLI read: the tokenizer
// arrays (types, lengths, ids in range, merges, byte tokens), split metadata, and the
// hyperparameters on which the pinned llama.cpp aborts instead of refusing the file (W_LLAMA_ABORT,
// from the table in formats/llama_asserts.h). Everything found here is a warning naming
// the key (malformed-inputs.md G57, G58): the file is valid GGUF, but a loader or a view would
// misread it. Viewers must still check before indexing.
#pragma once

#include <algorithm>
#include <cstring>
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
    // visit() for an element of `length` bytes at `text`, from which kReadableBytes bytes may be
    // read (the element may be shorter): a short element is checked without a branch on its
    // length (vocabulary elements are short and their lengths unpredictable).
    static constexpr uint64_t kReadableBytes = 16;
    void visit_readable(uint64_t index, const uint8_t* text, uint64_t length) {
        if (m_failed) return;
        if (length > kReadableBytes)
            visit(index, std::string_view(reinterpret_cast<const char*>(text), std::min(length, kMaxVisitBytes)));
        else if (!passes_short(text, length))
            m_failed = index;
    }
    // Adds the warning, if any, about entry `e` to the model.
    void finish(Model& model, const MetadataEntry& e) const;

    // For a part of the array checked apart (gguf_string_split.h): a check of the same rule that
    // has seen nothing, the first element this one found failing, and a failure found by such a
    // check, kept when this one has none.
    StringArrayCheck fresh() const { return StringArrayCheck(m_rule); }
    std::optional<uint64_t> first_failure() const { return m_failed; }
    void note_failure(uint64_t index) {
        if (!m_failed) m_failed = index;
    }
    static constexpr uint64_t kMaxVisitBytes = 4096;

private:
    bool passes(std::string_view element) const {
        if (m_rule == Rule::merge_has_space) return element.find(' ') != std::string_view::npos;
        const bool looks_like_byte = element.size() >= 4 && element.size() <= 8 && element.starts_with("<0x") && element.back() == '>';
        return !looks_like_byte || is_byte_token(element);
    }
    bool passes_short(const uint8_t* text, uint64_t length) const {
        if (m_rule == Rule::merge_has_space) {
            const uint64_t low = std::min<uint64_t>(length, 8), high = length - low;
            return ((space_bytes(load_word(text)) & first_bytes(low)) | (space_bytes(load_word(text + 8)) & first_bytes(high))) != 0;
        }
        const bool looks_like_byte = (length - 4 <= 4) & (text[0] == '<') & (text[1] == '0') & (text[2] == 'x') &
                                     (text[length == 0 ? 0 : length - 1] == '>');
        return !looks_like_byte || is_byte_token(std::string_view(reinterpret_cast<const char*>(text), length));
    }
    // Words are read as the file's bytes in order, little-endian (as the reader reads lengths).
    static uint64_t load_word(const uint8_t* p) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        return w;
    }
    // 0x80 in each byte of the word that is a space, 0 elsewhere.
    static uint64_t space_bytes(uint64_t word) {
        constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
        const uint64_t x = word ^ 0x2020202020202020ull;
        return ~(((x & kLow7) + kLow7) | x | kLow7);
    }
    // A mask of the first n (<= 8) bytes of a word, looked up rather than branched on.
    static uint64_t first_bytes(uint64_t n) {
        static constexpr uint64_t kMasks[9] = {0,
                                               0xFFull,
                                               0xFFFFull,
                                               0xFFFFFFull,
                                               0xFFFFFFFFull,
                                               0xFFFFFFFFFFull,
                                               0xFFFFFFFFFFFFull,
                                               0xFFFFFFFFFFFFFFull,
                                               ~0ull};
        return kMasks[n];
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
