// Fixtures for safetensors tests (malformed-inputs.md B2): exact bytes for hostile headers, a
// packing builder for valid files, and checks shared by the safetensors test files.
// Nothing here validates: the bytes are what the test asked for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlens/model/model.h"

namespace mlens::test {

// u64 little-endian N, then `header`, then `data`; N is the header's size unless given.
std::vector<uint8_t> safetensors_bytes(std::string_view header, const std::vector<uint8_t>& data = {},
                                       std::optional<uint64_t> n = std::nullopt);
// The same with `data_bytes` zero bytes of data.
std::vector<uint8_t> safetensors_bytes(std::string_view header, size_t data_bytes);

// One tensor entry's JSON text: "<name>":{"dtype":"<dtype>","shape":<shape>,"data_offsets":[b,e]}.
// `name` is inserted as written (it may hold JSON escapes); `shape` is JSON text such as "[2,3]".
std::string st_entry(std::string_view name, std::string_view dtype, std::string_view shape, uint64_t begin, uint64_t end);

// Absolute file offset (8 + position) of the n-th occurrence (from 0) of `needle` in `header`.
uint64_t header_offset(std::string_view header, std::string_view needle, size_t nth = 0);

// S1 of malformed-inputs.md B0: 72 bytes, N = 56, tensor w F32[2] = {1.5, -2.0}, two spaces of padding.
std::string s1_header();  // the 54 JSON bytes, without the padding
std::vector<uint8_t> s1_bytes();

// Builds a valid file: entries packed in the order added, header padded to 8 bytes with spaces.
class SafetensorsBuilder {
public:
    SafetensorsBuilder& metadata(std::string_view key, std::string_view value);  // JSON text of both, without quotes
    SafetensorsBuilder& tensor(std::string_view name, std::string_view dtype, std::string_view shape, const std::vector<uint8_t>& bytes);
    std::string header() const;
    std::vector<uint8_t> bytes() const;

private:
    std::vector<std::string> m_metadata;
    std::vector<std::string> m_entries;
    std::vector<uint8_t> m_data;
};

// Checks that `model` was rejected with exactly one error, of this code, field and offset.
void require_rejected(const Model& model, const std::string& code, const std::string& field, std::optional<uint64_t> offset);
// Parses `bytes` as a safetensors file and checks the rejection.
Model require_rejected(const std::vector<uint8_t>& bytes, const std::string& code, const std::string& field,
                       std::optional<uint64_t> offset);
// Parses `bytes` as a safetensors file and checks it was accepted with `warnings` warnings.
Model require_accepted(const std::vector<uint8_t>& bytes, size_t warnings = 0);

}  // namespace mlens::test
