#include "mlens/error_code.h"

#include <algorithm>
#include <iterator>

namespace mlens {

namespace {

constexpr std::string_view kNames[] = {
#define MLENS_ERROR_CODE_NAME(name) #name,
    MLENS_ERROR_CODES(MLENS_ERROR_CODE_NAME)
#undef MLENS_ERROR_CODE_NAME
};

}  // namespace

std::string_view code_name(ErrorCode code) {
    const auto index = static_cast<size_t>(code);
    return index < std::size(kNames) ? kNames[index] : std::string_view("E_UNKNOWN");
}

std::optional<ErrorCode> code_from_name(std::string_view text) {
    const auto* it = std::find(std::begin(kNames), std::end(kNames), text);
    if (it == std::end(kNames)) return std::nullopt;
    return static_cast<ErrorCode>(it - std::begin(kNames));
}

bool is_json_syntax_code(ErrorCode code) {
    return code == ErrorCode::E_JSON_START || code == ErrorCode::E_JSON_SYNTAX || code == ErrorCode::E_JSON_UTF8;
}

}  // namespace mlens
