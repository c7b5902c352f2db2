#include "mlens/ollama/digest.h"

#include "mlens/io/store_shape.h"
#include "mlens/text/digits.h"
#include "mlens/util/name_table.h"

namespace mlens {

namespace {

constexpr std::string_view kAlgorithm = "sha256";
constexpr size_t kHexDigits = 64;

}  // namespace

std::optional<BlobDigest> parse_blob_digest(std::string_view text) {
    if (text.size() != kAlgorithm.size() + 1 + kHexDigits) return std::nullopt;
    if (!text.starts_with(kAlgorithm)) return std::nullopt;
    char sep = text[kAlgorithm.size()];
    if (sep != ':' && sep != '-') return std::nullopt;
    std::string_view hex = text.substr(kAlgorithm.size() + 1);
    if (!all_lower_hex_digits(hex)) return std::nullopt;
    return BlobDigest{std::string(hex), sep == ':'};
}

std::string blob_file_name(const BlobDigest& digest) { return "sha256-" + digest.hex; }
std::string legacy_blob_file_name(const BlobDigest& digest) { return "sha256:" + digest.hex; }

const char* blob_file_kind_name(BlobFileKind kind) {
    static constexpr NameRow<BlobFileKind> kNames[] = {
        {BlobFileKind::blob, "blob"}, {BlobFileKind::partial, "partial download"}, {BlobFileKind::partial_part, "partial download part"},
        {BlobFileKind::temporary, "temporary file"}, {BlobFileKind::legacy_name, "legacy name"}, {BlobFileKind::other, "other"}};
    return name_of(kNames, kind);
}

BlobFileName classify_blob_file(std::string_view name) {
    const size_t prefix = kAlgorithm.size() + 1;
    if (is_blob_file_name(name)) return {BlobFileKind::blob};
    if (name.size() <= prefix || !name.starts_with(kAlgorithm)) return {};
    char sep = name[kAlgorithm.size()];
    std::string_view rest = name.substr(prefix);
    if (sep == ':') {
        if (rest.size() == kHexDigits && all_lower_hex_digits(rest)) return {BlobFileKind::legacy_name};
        return {};
    }
    if (sep != '-') return {};
    if (rest.size() >= kHexDigits && all_lower_hex_digits(rest.substr(0, kHexDigits))) {
        std::string_view tail = rest.substr(kHexDigits);
        if (tail == "-partial") return {BlobFileKind::partial};
        constexpr std::string_view kPart = "-partial-";
        if (tail.starts_with(kPart) && all_decimal_digits(tail.substr(kPart.size()))) return {BlobFileKind::partial_part};
        return {};
    }
    if (all_decimal_digits(rest)) return {BlobFileKind::temporary};
    return {};
}

std::string_view BlobFileName::hex_in(std::string_view name) const {
    if (kind == BlobFileKind::temporary || kind == BlobFileKind::other) return {};
    return name.substr(kAlgorithm.size() + 1, kHexDigits);
}

std::string to_hex(const unsigned char* bytes, size_t size) {
    static const char digits[] = "0123456789abcdef";
    std::string out(size * 2, '0');
    for (size_t i = 0; i < size; ++i) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    return out;
}

std::string short_digest(std::string_view digest, size_t hex_digits) {
    const size_t separator = digest.find_first_of(":-");
    if (separator == std::string_view::npos || digest.size() <= separator + 1 + hex_digits) return std::string(digest);
    return std::string(digest.substr(0, separator + 1 + hex_digits)) + "\xE2\x80\xA6";
}

}  // namespace mlens
