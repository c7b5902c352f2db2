// The small blobs of a manifest read as text: template, system, params, messages, license, the
// config blob and HF JSON files (ollama-store.md §3; malformed-inputs.md A3 "other blobs").
//
// Contract:
//  - read_text_blob reads at most max_bytes of a found blob (the rest is only counted), raw:
//    callers escape it for display (escape_for_display). Nothing is ever rendered, executed or
//    followed: a template is text.
//  - check_json_text validates a JSON object blob (params, config.json-like files) with
//    parse_strict_json's limits (UTF-8, depth <= 128, duplicate keys) without keeping it; the
//    error carries `code` and `field` with the parser's detail and offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mlens/ollama/store.h"
#include "mlens/result.h"

namespace mlens {

constexpr uint64_t kMaxTextBlobBytes = 1ull << 20;  // max_text_blob_bytes, read for display

struct TextBlob {
    std::string text;  // the first min(size, max_bytes) bytes, raw
    uint64_t size = 0;  // the blob's size
    bool truncated() const { return text.size() < size; }
};

Result<TextBlob> read_text_blob(const Store& store, const BlobLookup& blob, uint64_t max_bytes = kMaxTextBlobBytes);

Status check_json_text(std::string_view text, ErrorCode code, const std::string& field);

}  // namespace mlens
