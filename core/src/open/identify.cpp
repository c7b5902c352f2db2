#include "mlens/open/identify.h"

#include <algorithm>
#include <string>

#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/io/source_read_error.h"
#include "mlens/text/escape.h"

namespace mlens {

namespace {

constexpr uint64_t kShownBytes = 16;
// Neither format fits in fewer bytes than the safetensors length field.
constexpr uint64_t kShortestModel = 8;

Error not_a_model(std::string message) { return Error{ErrorCode::E_NOT_A_MODEL, "", 0, std::move(message)}; }

}  // namespace

Result<Format> identify_file(const ByteSource& source) {
    const uint64_t size = source.size();
    char head[kShownBytes];
    const uint64_t n = std::min<uint64_t>(size, kShownBytes);
    if (n > 0 && !source.read(0, n, head)) return source_read_error(source, "", 0, "cannot read the first " + std::to_string(n) + " bytes");
    const std::string_view first(head, n);
    if (first.starts_with("GGUF")) return Format::gguf;
    if (size == 0) return not_a_model("empty file (0 bytes)");
    if (size < kShortestModel)
        return not_a_model(std::to_string(size) + " bytes: too short for a GGUF (24-byte header) or safetensors (8-byte length)");
    if (looks_like_safetensors(source)) return Format::safetensors;
    if (is_legacy_ggml_magic(first.substr(0, 4)))
        return not_a_model("legacy GGML/GGMF/GGJT/GGLA model file, not supported (" + std::to_string(size) + " bytes): magic " +
                           hex_bytes(first.substr(0, 4)));
    return not_a_model("not a model file: " + std::to_string(size) + " bytes, starts with \"" + escape_for_display(first, kShownBytes) +
                       "\"" + (size > n ? "\xE2\x80\xA6" : ""));
}

}  // namespace mlens
