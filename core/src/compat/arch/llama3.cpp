// Llama-3 vocabularies (spec §1.4): an Ollama llama file with the Llama-3 vocab and a missing
// pre-tokenizer or the old end-of-text token gets llama-bpe and <|eot_id|>.
#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

// A token id read as UINT32 or non-negative INT32.
std::optional<uint32_t> token_id(const PlanState& s, const std::string& key) {
    const Value* v = s.kv(key);
    if (!v) return std::nullopt;
    if (v->type == ValueType::u32) return static_cast<uint32_t>(v->scalar.bits);
    if (v->type == ValueType::i32 && v->scalar.as_int() >= 0) return static_cast<uint32_t>(v->scalar.as_int());
    return std::nullopt;
}

std::string token_at(const PlanState& s, uint64_t i) {
    const Value* v = s.kv("tokenizer.ggml.tokens");
    if (!v || array_element_type(*v) != ValueType::string || i >= array_count(*v)) return {};
    return v->array->string_at(i, 64);
}

Detection detect_llama3(const PlanState& s, const std::string& arch) {
    if (arch != "llama") return wrong_arch(arch, "llama");
    if (token_at(s, 128009) != "<|eot_id|>") return {false, "token 128009 is not <|eot_id|>"};
    std::string tmpl = s.get_str("tokenizer.chat_template").value_or("");
    bool header = token_at(s, 128006) == "<|start_header_id|>" || tmpl.find("<|start_header_id|>") != std::string::npos ||
        tmpl.find("<|eot_id|>") != std::string::npos;
    if (!header) return {false, "neither token 128006 nor the chat template shows the Llama-3 header tokens"};
    if (pre_is_default(s)) return {true, "marker: Llama-3 vocab with tokenizer.ggml.pre missing or default"};
    if (token_id(s, "tokenizer.ggml.eos_token_id") == 128001u) return {true, "marker: Llama-3 vocab with eos_token_id 128001"};
    return {false, "Llama-3 vocab, but tokenizer.ggml.pre is set and eos_token_id is not 128001"};
}

void handle_llama3_metadata(PlanState& s, std::string&) {
    if (pre_is_default(s)) s.set_str("tokenizer.ggml.pre", "llama-bpe", "pre was missing or default");
    auto eos = token_id(s, "tokenizer.ggml.eos_token_id");
    if (!s.has_kv("tokenizer.ggml.eos_token_id") || eos == 128001u)
        s.set_u32("tokenizer.ggml.eos_token_id", 128009, "<|eot_id|> ends a Llama-3 chat turn");
    auto eot = token_id(s, "tokenizer.ggml.eot_token_id");
    if (!s.has_kv("tokenizer.ggml.eot_token_id") || eot == 128001u) s.set_u32("tokenizer.ggml.eot_token_id", 128009);
    s.set("tokenizer.ggml.eos_token_ids", array_i32({128009}));
}

}  // namespace

const ArchRules kLlama3Rules = {"llama3_metadata", "llama", detect_llama3, handle_llama3_metadata, nullptr};

}  // namespace mlens::compat
