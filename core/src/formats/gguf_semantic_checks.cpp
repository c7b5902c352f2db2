#include "gguf_semantic_checks.h"

#include "mlens/formats/ggml_type_table.h"
#include "mlens/formats/llama_asserts.h"
#include "mlens/model/summary.h"
#include "mlens/text/digits.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlens {

namespace {

void warn(Model& m, const MetadataEntry& e, ErrorCode code, std::string message) {
    m.diagnostics.push_back({Severity::warning, "GGUF", code, e.key, e.key_range.offset, std::move(message), e.file});
}

const ArrayIndex* array_of(const MetadataEntry* e) { return e && e->value.is_array() ? e->value.array.get() : nullptr; }

void check_parallel_array(Model& m, const char* key, uint64_t n_vocab, ValueType expected) {
    const MetadataEntry* e = m.find(key);
    if (!e) return;
    const ArrayIndex* a = array_of(e);
    if (!a || a->element_type != expected) {
        warn(m, *e, ErrorCode::W_TOKENIZER_METADATA,
             std::string("expected an array of ") + value_type_name(expected) + ", found " +
                 (a ? std::string("an array of ") + value_type_name(a->element_type) : value_type_name(e->value.type)));
        return;
    }
    if (a->count != n_vocab)
        warn(m, *e, ErrorCode::W_TOKENIZER_METADATA, std::to_string(a->count) + " entries for " + std::to_string(n_vocab) + " tokens");
}

void check_token_ids(Model& m, uint64_t n_vocab) {
    static const char* const kIdKeys[] = {"tokenizer.ggml.bos_token_id",     "tokenizer.ggml.eos_token_id",
                                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.separator_token_id",
                                          "tokenizer.ggml.padding_token_id", "tokenizer.ggml.eot_token_id",
                                          "tokenizer.ggml.mask_token_id"};
    for (const char* key : kIdKeys) {
        const MetadataEntry* e = m.find(key);
        if (!e) continue;
        if (!value_type_is_integer(e->value.type)) {
            warn(m, *e, ErrorCode::W_TOKENIZER_METADATA, std::string("token id typed ") + value_type_name(e->value.type));
        } else if (e->value.scalar.as_int() < 0 || e->value.scalar.as_uint() >= n_vocab) {
            warn(m, *e, ErrorCode::W_TOKENIZER_METADATA,
                 "token id " + e->value.scalar.to_string() + " is not below the vocabulary size " + std::to_string(n_vocab));
        }
    }
}

void check_tokenizer(Model& m) {
    const MetadataEntry* tokens_entry = m.find("tokenizer.ggml.tokens");
    if (!tokens_entry) return;
    const ArrayIndex* tokens = array_of(tokens_entry);
    if (!tokens || tokens->element_type != ValueType::string) {
        warn(m, *tokens_entry, ErrorCode::W_TOKENIZER_METADATA, "expected an array of STRING");
        return;
    }
    check_parallel_array(m, "tokenizer.ggml.scores", tokens->count, ValueType::f32);
    check_parallel_array(m, "tokenizer.ggml.token_type", tokens->count, ValueType::i32);
    check_token_ids(m, tokens->count);
}

// An integer split key, or nullopt (with a warning) when it is typed otherwise or negative.
std::optional<uint64_t> split_value(Model& m, const MetadataEntry& e) {
    if (!value_type_is_integer(e.value.type) || e.value.scalar.as_int() < 0) {
        warn(
            m, e, ErrorCode::W_SPLIT_METADATA,
            e.key + " is " +
                (value_type_is_integer(e.value.type) ? e.value.scalar.to_string() : std::string("typed ") + value_type_name(e.value.type)) +
                ", not a non-negative integer");
        return std::nullopt;
    }
    return e.value.scalar.as_uint();
}

void check_split(Model& m, const GgufLimits& limits) {
    const MetadataEntry* count = m.find("split.count");
    uint64_t n = 0;  // a usable split.count, or 0
    if (count) {
        std::optional<uint64_t> v = split_value(m, *count);
        if (v && (*v == 0 || *v > limits.max_split_count))
            warn(m, *count, ErrorCode::W_SPLIT_METADATA,
                 "split.count " + std::to_string(*v) + " is outside 1.." + std::to_string(limits.max_split_count));
        else if (v)
            n = *v;
    }
    if (const MetadataEntry* no = m.find("split.no")) {
        std::optional<uint64_t> k = split_value(m, *no);
        if (k && n > 0 && *k >= n)
            warn(m, *no, ErrorCode::W_SPLIT_METADATA, "split.no " + std::to_string(*k) + " is not below split.count " + std::to_string(n));
        else if (k && !count)
            warn(m, *no, ErrorCode::W_SPLIT_METADATA, "split.no without split.count");
    }
    if (const MetadataEntry* total = m.find("split.tensors.count")) {
        std::optional<uint64_t> t = split_value(m, *total);
        if (t && *t != m.tensors.size())
            warn(m, *total, ErrorCode::W_SPLIT_METADATA,
                 "split.tensors.count " + std::to_string(*t) + " but " + std::to_string(m.tensors.size()) + " tensors were found");
    }
}

// The ggml type a llama-quantize ftype gives its tensors (its base type): the row whose ftype
// names hold the ftype's name; nullptr for an ftype no row makes (F32, removed ftypes, GUESSED).
const GgmlTypeRow* base_type_of_ftype(uint64_t ftype) {
    const std::string name = file_type_name(ftype);
    if (name == "F32") return nullptr;
    for (const GgmlTypeRow& row : ggml_type_rows())
        for (const char* f : row.ftype_names)
            if (f && name == f) return &row;
    return nullptr;
}

// general.file_type against the matrices: the label is wrong when no matrix holds its base type
// though some could (the contract in the header).
void check_file_type_label(Model& m) {
    const MetadataEntry* e = m.find("general.file_type");
    const std::optional<uint64_t> ftype = m.get_uint("general.file_type");
    const GgmlTypeRow* base = ftype ? base_type_of_ftype(*ftype) : nullptr;
    if (!e || !base) return;
    // MXFP4_MOE quantizes the experts' matrices only (Q8_0 the rest): they are the ones it is about.
    const bool experts_only = file_type_name(*ftype) == "MXFP4_MOE";
    uint64_t could = 0;
    std::vector<std::pair<std::string, uint64_t>> held;  // the matrices' types, first-seen order, with counts
    for (const TensorInfo& t : m.tensors) {
        if (t.ne.size() < 2 || t.quant || (t.type.known && t.type.id == 0)) continue;  // vectors, per-tensor quantization, F32
        if (experts_only && t.name.find("_exps") == std::string::npos) continue;
        if (t.type.known && t.type.id == base->id) return;
        if (t.ne[0] % base->block_elements == 0) ++could;
        auto it = std::find_if(held.begin(), held.end(), [&](const auto& h) { return h.first == t.type.name; });
        if (it == held.end())
            held.push_back({t.type.name, 1});
        else
            ++it->second;
    }
    uint64_t matrices = 0;
    std::string types;
    for (const auto& [type, n] : held) {
        matrices += n;
        types += (types.empty() ? "" : ", ") + type + " \xC3\x97" + std::to_string(n);
    }
    // A few wide matrices among narrow ones are the ones a mix bumps (ffn_down to Q4_K under
    // Q3_K_M, while the rest fall back): only a label most matrices could stand behind is checked.
    if (could == 0 || could * 2 < matrices) return;
    const std::string rows = base->block_elements == 1 ? "" : " (rows of whole " + std::to_string(base->block_elements) + "-value blocks)";
    warn(m, *e, ErrorCode::W_FILE_TYPE_LABEL,
         "general.file_type is " + std::to_string(*ftype) + " (" + file_type_name(*ftype) + "), but none of the file's " +
             std::to_string(matrices) + " matrices is " + base->name + ", though " + (could == matrices ? "all " : "") +
             std::to_string(could) + " could be" + rows + ": they are " + types +
             ". llama.cpp and Ollama show this label as the file's quantization");
}

}  // namespace

bool parse_byte_token(std::string_view piece, uint8_t& byte) {
    if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return false;
    int hi = hex_digit_value(piece[3]), lo = hex_digit_value(piece[4]);
    if (hi < 0 || lo < 0) return false;
    byte = static_cast<uint8_t>(hi * 16 + lo);
    return true;
}

bool StringArrayCheck::is_byte_token(std::string_view piece) {
    uint8_t byte;
    return parse_byte_token(piece, byte);
}

void StringArrayCheck::finish(Model& m, const MetadataEntry& e) const {
    if (!m_failed) return;
    const char* what = m_rule == Rule::merge_has_space ? "has no space between its two parts" : "looks like a byte token but is not <0xNN>";
    warn(m, e, ErrorCode::W_TOKENIZER_METADATA, "element " + std::to_string(*m_failed) + " " + what);
}

std::optional<StringArrayCheck> string_array_check_for(std::string_view key) {
    if (key == "tokenizer.ggml.merges") return StringArrayCheck(StringArrayCheck::Rule::merge_has_space);
    if (key == "tokenizer.ggml.tokens") return StringArrayCheck(StringArrayCheck::Rule::byte_token_form);
    return std::nullopt;
}

void check_gguf_semantics(Model& model, const GgufLimits& limits) {
    check_tokenizer(model);
    check_split(model, limits);
    check_llama_asserts(model);
    check_file_type_label(model);
}

}  // namespace mlens
