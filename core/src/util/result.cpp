#include "mlens/result.h"

namespace mlens {

std::string Error::to_string() const {
    std::string s(code_name(code));
    if (!field.empty()) s += " " + field;
    if (offset) s += " offset=" + std::to_string(*offset);
    if (!message.empty()) s += ": " + message;
    return s;
}

}  // namespace mlens
