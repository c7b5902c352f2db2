// gemma3n (spec §1.4): vocabulary cut to per_layer_token_embd's rows and token types fixed.
#include <algorithm>

#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

Detection detect_gemma3n(const PlanState& s, const std::string& arch) {
    if (arch != "gemma3n") return wrong_arch(arch, "gemma3n");
    auto te = s.tensor("token_embd.weight");
    auto pl = s.tensor("per_layer_token_embd.weight");
    if (!te || !pl) return {false, "token_embd.weight or per_layer_token_embd.weight missing"};
    uint64_t a = s.slot(*te).ne.size() > 1 ? s.slot(*te).ne[1] : 1;
    uint64_t b = s.slot(*pl).ne.size() > 1 ? s.slot(*pl).ne[1] : 1;
    if (a == b) return {false, "token_embd and per_layer_token_embd have the same rows (" + std::to_string(a) + ")"};
    return {true, "marker: token_embd rows " + std::to_string(a) + " ≠ per_layer_token_embd rows " + std::to_string(b)};
}

// AMBIGUOUS (spec §1.4): the shim's README says gemma3n hides embedded vision/audio tensors, but
// its code registers no skip prefix. We follow the code: nothing is hidden.
void handle_gemma3n(PlanState& s, std::string&) {
    auto pl = s.tensor("per_layer_token_embd.weight");
    const uint64_t vocab = dim(s, *pl, 1);
    s.set_str("tokenizer.ggml.model", "llama",
              "AMBIGUOUS: the shim README says gemma3n hides vision/audio tensors; its code hides none, and neither do we");
    if (auto te = s.tensor("token_embd.weight"))
        s.set_shape(*te, {dim(s, *te, 0), vocab}, "rows cut to per_layer_token_embd's; the loader reads the first rows");
    s.truncate_str_arr("tokenizer.ggml.tokens", vocab);
    s.truncate_data_arr("tokenizer.ggml.scores", ValueType::f32, vocab);
    s.truncate_data_arr("tokenizer.ggml.token_type", ValueType::i32, vocab);

    const Value* tokens = s.kv("tokenizer.ggml.tokens");
    const Value* types = s.kv("tokenizer.ggml.token_type");
    if (tokens && types && array_element_type(*types) == ValueType::i32) {
        auto elems = array_scalars(*types);
        auto names = array_strings_of(*tokens);
        const uint64_t n = std::min<uint64_t>(elems->size(), vocab);
        std::vector<int32_t> fixed;
        for (uint64_t i = 0; i < n; ++i) {
            int32_t t = static_cast<int32_t>((*elems)[i].bits);
            const std::string tok = names && i < names->size() ? (*names)[i] : std::string();
            if (tok.size() == 6 && tok.starts_with("<0x") && tok[5] == '>')
                t = 6;
            else if (tok.starts_with("<unused"))
                t = 1;
            fixed.push_back(t);
        }
        s.set("tokenizer.ggml.token_type", array_i32(fixed), "byte tokens <0x..> typed BYTE (6), <unused…> typed NORMAL (1)");
    }

    const Value* eos = s.kv("tokenizer.ggml.eos_token_ids");
    if (eos && eos->is_array()) {
        auto et = array_element_type(*eos);
        if (et == ValueType::i32 || et == ValueType::u32) {
            auto elems = array_scalars(*eos);
            bool has106 = false;
            for (const Scalar& e : *elems) has106 |= static_cast<uint32_t>(e.bits) == 106u;
            std::vector<uint32_t> ids;
            for (const Scalar& e : *elems) ids.push_back(static_cast<uint32_t>(e.bits));
            if (!has106) ids.push_back(106);
            if (et == ValueType::u32) {
                s.set("tokenizer.ggml.eos_token_ids", array_u32(ids), "106 (<end_of_turn>) added if absent");
            } else {
                std::vector<int32_t> signed_ids(ids.begin(), ids.end());
                s.set("tokenizer.ggml.eos_token_ids", array_i32(signed_ids), "106 (<end_of_turn>) added if absent");
            }
        }
    } else {
        s.set("tokenizer.ggml.eos_token_ids", array_i32({1, 106}), "missing: set to [1, 106]");
    }
}

}  // namespace

const ArchRules kGemma3nRules = {"gemma3n", "gemma3n", detect_gemma3n, handle_gemma3n, nullptr};

}  // namespace mlens::compat
