// snowflake-arctic-embed2 (spec §1.4): a bert file whose T5 charsmap Ollama stored as base64
// characters gets its bytes back.
#include <optional>
#include <vector>

#include "compat/arch/arch_rules.h"
#include "compat/arch/rule_support.h"

namespace mlens::compat {

namespace {

int base64_digit(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Standard base64, stopping at '='; nullopt on any other character outside the alphabet.
std::optional<std::vector<uint8_t>> decode_base64(const std::string& text) {
    std::vector<uint8_t> out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        if (c == '=') break;
        int d = base64_digit(c);
        if (d < 0) return std::nullopt;
        acc = (acc << 6) | static_cast<uint32_t>(d);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
        }
    }
    return out;
}

Detection detect_snowflake(const PlanState& s, const std::string& arch) {
    if (arch != "bert") return wrong_arch(arch, "bert");
    if (s.get_str("tokenizer.ggml.model") != "t5") return {false, "tokenizer.ggml.model is not \"t5\""};
    const Value* cm = s.kv("tokenizer.ggml.precompiled_charsmap");
    if (!cm || array_element_type(*cm) != ValueType::string) return {false, "tokenizer.ggml.precompiled_charsmap is not a STRING array"};
    return {true, "marker: tokenizer.ggml.precompiled_charsmap is a STRING array"};
}

void handle_snowflake_arctic_embed2(PlanState& s, std::string&) {
    const std::string key = "tokenizer.ggml.precompiled_charsmap";
    auto entries = array_strings_of(*s.kv(key));
    if (!entries) {
        s.issue("cannot read " + key);
        return;
    }
    std::string encoded;
    for (size_t i = 0; i < entries->size(); ++i) {
        if ((*entries)[i].size() != 1) {
            s.issue(key + " entry " + std::to_string(i) + " is not exactly one character: the shim aborts the fix");
            return;
        }
        encoded += (*entries)[i];
    }
    auto decoded = decode_base64(encoded);
    if (!decoded || decoded->empty()) {
        s.issue(key + " is not valid base64: the shim leaves it unchanged");
        return;
    }
    s.set(key, array_u8(*decoded), "base64 string array decoded to " + std::to_string(decoded->size()) + " bytes");
}

}  // namespace

const ArchRules kSnowflakeArcticEmbed2Rules = {"snowflake_arctic_embed2", "bert", detect_snowflake, handle_snowflake_arctic_embed2,
                                               nullptr};

}  // namespace mlens::compat
