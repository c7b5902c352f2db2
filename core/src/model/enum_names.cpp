#include "mlens/model/enum_names.h"

#include "mlens/model/summary.h"

namespace mlens {

namespace {

// A key naming an architecture before the suffix ("llama.pooling_type"), never the bare suffix.
bool has_arch_and_suffix(std::string_view s, std::string_view suffix) { return s.size() > suffix.size() && s.ends_with(suffix); }

template <size_t N>
const char* lookup(const char* const (&names)[N], int64_t v) {
    return v >= 0 && static_cast<uint64_t>(v) < N ? names[v] : nullptr;
}

}  // namespace

const char* token_type_name(int64_t type) {
    static const char* const kNames[] = {"UNDEFINED", "NORMAL", "UNKNOWN", "CONTROL", "USER_DEFINED", "UNUSED", "BYTE"};
    return lookup(kNames, type);
}

bool is_token_type_key(std::string_view key) { return key == "tokenizer.ggml.token_type"; }

std::optional<std::string> enum_value_name(std::string_view key, const Scalar& value) {
    if (!value_type_is_integer(value.type)) return std::nullopt;
    int64_t v = value.as_int();
    if (key == "general.file_type") {
        std::string name = file_type_name(value.as_uint());
        if (v < 0 || name.starts_with("unknown(")) return std::nullopt;
        return name;
    }
    if (has_arch_and_suffix(key, ".pooling_type")) {
        static const char* const kNames[] = {"NONE", "MEAN", "CLS", "LAST", "RANK"};
        if (v == -1) return "UNSPECIFIED";
        if (const char* n = lookup(kNames, v)) return n;
    }
    if (has_arch_and_suffix(key, ".rope.scaling.type")) {
        static const char* const kNames[] = {"NONE", "LINEAR", "YARN", "LONGROPE"};
        if (v == -1) return "UNSPECIFIED";
        if (const char* n = lookup(kNames, v)) return n;
    }
    if (is_token_type_key(key))
        if (const char* n = token_type_name(v)) return n;
    return std::nullopt;
}

}  // namespace mlens
