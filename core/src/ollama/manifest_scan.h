// The two routes of parse_manifest (manifest.h), apart, so a test can hold one against the other.
//
// Contract:
//  - parse_manifest_strict is the reference: parse_strict_json with the manifest schema as its
//    handler, every rule of manifest.h.
//  - scan_plain_manifest reads the manifests Ollama writes at the cost of their bytes: one pass,
//    no JSON events, no key sets. It accepts only a plain subset of strict JSON, and for a text it
//    accepts it returns exactly what parse_manifest_strict returns (every field, range, offset,
//    diagnostic and `valid`). Anything outside the subset gives nullopt and the strict route
//    decides. The subset: JSON whitespace between tokens; the root object with the keys
//    schemaVersion (the integer 2), mediaType (optional), config and layers, each once, in any
//    order; layer objects with mediaType, digest and size, and optionally from and name, each
//    once; strings of printable ASCII without escapes (bytes 0x20-0x7E but '"' and '\');
//    sizes in canonical decimal that fit 64 bits; at most kMaxLayers layers; nothing but
//    whitespace after the root object. Every text of the subset is valid UTF-8 and valid JSON,
//    and raises no schema error, so only the checks after the parse (digests, media types) add
//    diagnostics, and they are the strict route's own (finish_manifest).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "mlens/ollama/manifest.h"

namespace mlens {

Manifest parse_manifest_strict(std::string_view text, uint64_t base = 0);
std::optional<Manifest> scan_plain_manifest(std::string_view text, uint64_t base = 0);

// What both routes do after the parse: digests checked (E_BAD_DIGEST), layer media types
// (W_UNKNOWN_MEDIA_TYPE, W_DEPRECATED_MEDIA_TYPE) and the manifest's (W_MANIFEST_MEDIA_TYPE),
// then `valid`.
void finish_manifest(Manifest& m);

}  // namespace mlens
