// Blob digests and the file names in an Ollama store's blobs/ directory (ollama-store.md §3,
// malformed-inputs.md A3 "digests").
//
// Contract:
//  - parse_blob_digest accepts exactly "sha256:" or "sha256-" followed by 64 lowercase hex digits,
//    the whole string and nothing more: no whitespace, newline, NUL, uppercase or other digit
//    forms. It checks bytes, not a regex, so there is no "$ before a trailing newline" gap.
//  - blob_file_name builds a file name only from a digest that parse_blob_digest accepted, so no
//    byte of a manifest ever reaches a path unchecked. Both separators map to "sha256-<hex>"; the
//    colon form is only ever looked up (read-only) as a legacy name, never created.
//  - classify_blob_file labels what may lie in blobs/: blobs, the download leftovers Ollama writes
//    ("<blob>-partial", "<blob>-partial-<n>"), its temporary files ("sha256-<digits>" from
//    os.CreateTemp), legacy "sha256:<hex>" names, and anything else. Pure functions of the name.
//  - short_digest shows a digest as the views do: the algorithm, its separator and the first
//    hex_digits digits, then "…" ("sha256:aeda2f3c55e1…"); a text too short to cut, or without
//    a separator, comes back as it is. It neither checks nor escapes: callers escape.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mlens {

struct BlobDigest {
    std::string hex;  // 64 lowercase hex digits
    bool colon = true;  // written "sha256:" (false: "sha256-")
    std::string text() const { return "sha256:" + hex; }
};

std::optional<BlobDigest> parse_blob_digest(std::string_view text);

// "sha256-<hex>" (legacy: "sha256:<hex>").
std::string blob_file_name(const BlobDigest& digest);
std::string legacy_blob_file_name(const BlobDigest& digest);

enum class BlobFileKind { blob, partial, partial_part, temporary, legacy_name, other };
const char* blob_file_kind_name(BlobFileKind kind);  // "blob", "partial download", ...

// What a name in blobs/ is. The digest it spells, for a blob, partial, partial_part or
// legacy_name, is read from the name itself (hex_in), so that labelling a listing of many
// thousands of names copies none of them.
struct BlobFileName {
    BlobFileKind kind = BlobFileKind::other;
    // The 64 hex digits of `name`, the name this label was given for; empty for a temporary or
    // other file.
    std::string_view hex_in(std::string_view name) const;
};

BlobFileName classify_blob_file(std::string_view name);

std::string short_digest(std::string_view digest, size_t hex_digits = 12);

// Lowercase hex of bytes (digests for display and comparison).
std::string to_hex(const unsigned char* bytes, size_t size);

}  // namespace mlens
