#include "mlens/io/source_read_error.h"

#include "mlens/error_code.h"

namespace mlens {

Error source_read_error(const ByteSource& source, std::string field, std::optional<uint64_t> offset, const std::string& what) {
    const std::string why = source.read_failure();
    const size_t colon = why.find(": ");
    const std::optional<ErrorCode> code = colon == std::string::npos ? std::nullopt : code_from_name(why.substr(0, colon));
    return Error{code.value_or(ErrorCode::E_IO), std::move(field), offset,
                 what + ": " +
                     (code              ? why.substr(colon + 2)
                          : why.empty() ? "the read failed"
                                        : why)};
}

}  // namespace mlens
