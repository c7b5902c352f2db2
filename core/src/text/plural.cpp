#include "mlens/text/plural.h"

namespace mlens {

std::string noun_for(uint64_t n, std::string_view one, std::string_view many) {
    if (n == 1) return std::string(one);
    if (!many.empty()) return std::string(many);
    return std::string(one) + "s";
}

std::string counted_as(std::string_view number_text, uint64_t n, std::string_view one, std::string_view many) {
    return std::string(number_text) + " " + noun_for(n, one, many);
}

std::string plural(uint64_t n, std::string_view one, std::string_view many) { return counted_as(std::to_string(n), n, one, many); }

}  // namespace mlens
