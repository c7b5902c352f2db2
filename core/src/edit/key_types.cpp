#include "mlens/edit/key_types.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace mlens {

namespace {

struct KeyTypeRow {
    const char* key;
    ValueType type;
    std::optional<ValueType> element;
};

constexpr const char* kAnyArchPrefix = "{arch}.";

using VT = ValueType;
const KeyTypeRow kKeyTypes[] = {
    {"general.architecture", VT::string, {}},
    {"general.quantization_version", VT::u32, {}},
    {"general.alignment", VT::u32, {}},
    {"general.file_type", VT::u32, {}},
    {"general.name", VT::string, {}},
    {"general.author", VT::string, {}},
    {"general.version", VT::string, {}},
    {"general.organization", VT::string, {}},
    {"general.finetune", VT::string, {}},
    {"general.basename", VT::string, {}},
    {"general.description", VT::string, {}},
    {"general.quantized_by", VT::string, {}},
    {"general.size_label", VT::string, {}},
    {"general.license", VT::string, {}},
    {"general.license.name", VT::string, {}},
    {"general.license.link", VT::string, {}},
    {"general.url", VT::string, {}},
    {"general.doi", VT::string, {}},
    {"general.uuid", VT::string, {}},
    {"general.repo_url", VT::string, {}},
    {"general.source.url", VT::string, {}},
    {"general.source.repo_url", VT::string, {}},
    {"general.tags", VT::array, VT::string},
    {"general.languages", VT::array, VT::string},
    {"general.datasets", VT::array, VT::string},
    {"tokenizer.ggml.model", VT::string, {}},
    {"tokenizer.ggml.pre", VT::string, {}},
    {"tokenizer.ggml.tokens", VT::array, VT::string},
    {"tokenizer.ggml.token_type", VT::array, VT::i32},
    {"tokenizer.ggml.scores", VT::array, VT::f32},
    {"tokenizer.ggml.merges", VT::array, VT::string},
    {"tokenizer.ggml.bos_token_id", VT::u32, {}},
    {"tokenizer.ggml.eos_token_id", VT::u32, {}},
    {"tokenizer.ggml.eot_token_id", VT::u32, {}},
    {"tokenizer.ggml.eom_token_id", VT::u32, {}},
    {"tokenizer.ggml.unknown_token_id", VT::u32, {}},
    {"tokenizer.ggml.seperator_token_id", VT::u32, {}},
    {"tokenizer.ggml.padding_token_id", VT::u32, {}},
    {"tokenizer.ggml.cls_token_id", VT::u32, {}},
    {"tokenizer.ggml.mask_token_id", VT::u32, {}},
    {"tokenizer.ggml.add_bos_token", VT::boolean, {}},
    {"tokenizer.ggml.add_eos_token", VT::boolean, {}},
    {"tokenizer.ggml.add_sep_token", VT::boolean, {}},
    {"tokenizer.ggml.add_space_prefix", VT::boolean, {}},
    {"tokenizer.ggml.remove_extra_whitespaces", VT::boolean, {}},
    {"tokenizer.ggml.eos_token_ids", VT::array, VT::u32},
    {"tokenizer.chat_template", VT::string, {}},
    {"{arch}.vocab_size", VT::u32, {}},
    {"{arch}.context_length", VT::u32, {}},
    {"{arch}.embedding_length", VT::u32, {}},
    {"{arch}.block_count", VT::u32, {}},
    {"{arch}.feed_forward_length", VT::u32, {}},
    {"{arch}.expert_count", VT::u32, {}},
    {"{arch}.expert_used_count", VT::u32, {}},
    {"{arch}.expert_shared_count", VT::u32, {}},
    {"{arch}.use_parallel_residual", VT::boolean, {}},
    {"{arch}.tensor_data_layout", VT::string, {}},
    {"{arch}.attention.head_count", VT::u32, {}},
    {"{arch}.attention.head_count_kv", VT::u32, {}},
    {"{arch}.attention.max_alibi_bias", VT::f32, {}},
    {"{arch}.attention.clamp_kqv", VT::f32, {}},
    {"{arch}.attention.key_length", VT::u32, {}},
    {"{arch}.attention.value_length", VT::u32, {}},
    {"{arch}.attention.layer_norm_epsilon", VT::f32, {}},
    {"{arch}.attention.layer_norm_rms_epsilon", VT::f32, {}},
    {"{arch}.attention.causal", VT::boolean, {}},
    {"{arch}.attention.sliding_window", VT::u32, {}},
    {"{arch}.rope.dimension_count", VT::u32, {}},
    {"{arch}.rope.freq_base", VT::f32, {}},
    {"{arch}.rope.scale_linear", VT::f32, {}},
    {"{arch}.rope.scaling.type", VT::string, {}},
    {"{arch}.rope.scaling.factor", VT::f32, {}},
    {"{arch}.rope.scaling.attn_factor", VT::f32, {}},
    {"{arch}.rope.scaling.original_context_length", VT::u32, {}},
    {"{arch}.rope.scaling.finetuned", VT::boolean, {}},
    {"{arch}.rope.scaling.yarn_log_multiplier", VT::f32, {}},
};

std::string upper(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return out;
}

std::optional<ValueType> scalar_type_named(std::string_view name) {
    for (uint32_t i = 0; i < kValueTypeCount; ++i) {
        const auto t = static_cast<ValueType>(i);
        if (t != ValueType::array && name == value_type_name(t)) return t;
    }
    return std::nullopt;
}

}  // namespace

std::optional<KeyType> known_key_type(std::string_view key) {
    for (const KeyTypeRow& r : kKeyTypes)
        if (key == r.key) return KeyType{r.type, r.element};
    const size_t dot = key.find('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    const std::string_view suffix = key.substr(dot + 1);
    const std::string_view prefix = kAnyArchPrefix;
    for (const KeyTypeRow& r : kKeyTypes) {
        const std::string_view row = r.key;
        if (row.substr(0, prefix.size()) == prefix && row.substr(prefix.size()) == suffix) return KeyType{r.type, r.element};
    }
    return std::nullopt;
}

std::optional<KeyType> key_type_from_name(std::string_view name) {
    const std::string text = upper(name);
    const std::string_view array = "ARRAY[";
    if (text.size() > array.size() + 1 && std::string_view(text).substr(0, array.size()) == array && text.back() == ']') {
        auto element = scalar_type_named(std::string_view(text).substr(array.size(), text.size() - array.size() - 1));
        if (!element) return std::nullopt;
        return KeyType{ValueType::array, element};
    }
    auto scalar = scalar_type_named(text);
    if (!scalar) return std::nullopt;
    return KeyType{*scalar, std::nullopt};
}

}  // namespace mlens
