#include "gguf_semantic_checks.h"

#include <string>

namespace mlens {

namespace {

void warn(Model& m, const MetadataEntry& e, const char* code, std::string message) {
    m.diagnostics.push_back({Severity::warning, "GGUF", code, e.key, e.key_range.offset, std::move(message), e.file});
}

const ArrayIndex* array_of(const MetadataEntry* e) {
    return e && e->value.is_array() ? e->value.array.get() : nullptr;
}

void check_parallel_array(Model& m, const char* key, uint64_t n_vocab, ValueType expected) {
    const MetadataEntry* e = m.find(key);
    if (!e) return;
    const ArrayIndex* a = array_of(e);
    if (!a || a->element_type != expected) {
        warn(m, *e, "W_TOKENIZER_METADATA", std::string("expected an array of ") + value_type_name(expected) +
             ", found " + (a ? std::string("an array of ") + value_type_name(a->element_type) : value_type_name(e->value.type)));
        return;
    }
    if (a->count != n_vocab)
        warn(m, *e, "W_TOKENIZER_METADATA", std::to_string(a->count) + " entries for " + std::to_string(n_vocab) + " tokens");
}

void check_token_ids(Model& m, uint64_t n_vocab) {
    static const char* const kIdKeys[] = {
        "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
        "tokenizer.ggml.separator_token_id", "tokenizer.ggml.padding_token_id", "tokenizer.ggml.eot_token_id",
        "tokenizer.ggml.mask_token_id"};
    for (const char* key : kIdKeys) {
        const MetadataEntry* e = m.find(key);
        if (!e) continue;
        if (!value_type_is_integer(e->value.type)) {
            warn(m, *e, "W_TOKENIZER_METADATA", std::string("token id typed ") + value_type_name(e->value.type));
        } else if (e->value.scalar.as_uint() >= n_vocab) {
            warn(m, *e, "W_TOKENIZER_METADATA", "token id " + e->value.scalar.to_string() +
                 " is not below the vocabulary size " + std::to_string(n_vocab));
        }
    }
}

void check_merges(Model& m) {
    const MetadataEntry* e = m.find("tokenizer.ggml.merges");
    if (!e) return;
    const ArrayIndex* a = array_of(e);
    if (!a || a->element_type != ValueType::string) {
        warn(m, *e, "W_TOKENIZER_METADATA", "expected an array of STRING");
        return;
    }
    a->for_each_string(0, 4096, [&](uint64_t i, std::string_view merge) {
        if (merge.find(' ') != std::string_view::npos) return true;
        warn(m, *e, "W_TOKENIZER_METADATA", "merge " + std::to_string(i) + " has no space between its two parts");
        return false;
    });
}

void check_byte_tokens(Model& m, const MetadataEntry& tokens_entry, const ArrayIndex& tokens) {
    tokens.for_each_string(0, 64, [&](uint64_t i, std::string_view piece) {
        uint8_t byte;
        if (piece.size() < 4 || piece.size() > 8 || piece.substr(0, 3) != "<0x" || piece.back() != '>' || parse_byte_token(piece, byte))
            return true;
        warn(m, tokens_entry, "W_TOKENIZER_METADATA", "token " + std::to_string(i) + " looks like a byte token but is not <0xNN>");
        return false;
    });
}

void check_tokenizer(Model& m) {
    const MetadataEntry* tokens_entry = m.find("tokenizer.ggml.tokens");
    if (!tokens_entry) return;
    const ArrayIndex* tokens = array_of(tokens_entry);
    if (!tokens || tokens->element_type != ValueType::string) {
        warn(m, *tokens_entry, "W_TOKENIZER_METADATA", "expected an array of STRING");
        return;
    }
    check_parallel_array(m, "tokenizer.ggml.scores", tokens->count, ValueType::f32);
    check_parallel_array(m, "tokenizer.ggml.token_type", tokens->count, ValueType::i32);
    check_token_ids(m, tokens->count);
    check_merges(m);
    check_byte_tokens(m, *tokens_entry, *tokens);
}

void check_split(Model& m, const GgufLimits& limits) {
    const MetadataEntry* count = m.find("split.count");
    if (!count) return;
    uint64_t n = value_type_is_integer(count->value.type) ? count->value.scalar.as_uint() : 0;
    if (n == 0 || n > limits.max_split_count)
        warn(m, *count, "W_SPLIT_METADATA", "split.count " + count->value.scalar.to_string() +
             " is outside 1.." + std::to_string(limits.max_split_count));
    if (const MetadataEntry* no = m.find("split.no"); no && value_type_is_integer(no->value.type) && no->value.scalar.as_uint() >= n)
        warn(m, *no, "W_SPLIT_METADATA", "split.no " + no->value.scalar.to_string() + " is not below split.count " + std::to_string(n));
    if (const MetadataEntry* total = m.find("split.tensors.count");
        total && value_type_is_integer(total->value.type) && total->value.scalar.as_uint() != m.tensors.size())
        warn(m, *total, "W_SPLIT_METADATA", "split.tensors.count " + total->value.scalar.to_string() + " but " +
             std::to_string(m.tensors.size()) + " tensors were found");
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

bool parse_byte_token(std::string_view piece, uint8_t& byte) {
    if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return false;
    int hi = hex_digit(piece[3]), lo = hex_digit(piece[4]);
    if (hi < 0 || lo < 0) return false;
    byte = static_cast<uint8_t>(hi * 16 + lo);
    return true;
}

void check_gguf_semantics(Model& model, const GgufLimits& limits) {
    check_tokenizer(model);
    check_split(model, limits);
}

}  // namespace mlens
