#include "safetensors_builder.h"

#include <catch2/catch.hpp>

#include <cstring>

#include "mlens/formats/safetensors_reader.h"

namespace mlens::test {

std::vector<uint8_t> safetensors_bytes(std::string_view header, const std::vector<uint8_t>& data, std::optional<uint64_t> n) {
    uint64_t length = n.value_or(header.size());
    std::vector<uint8_t> out(8);
    for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(length >> (8 * i));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

std::vector<uint8_t> safetensors_bytes(std::string_view header, size_t data_bytes) {
    return safetensors_bytes(header, std::vector<uint8_t>(data_bytes, 0));
}

std::string st_entry(std::string_view name, std::string_view dtype, std::string_view shape, uint64_t begin, uint64_t end) {
    return "\"" + std::string(name) + "\":{\"dtype\":\"" + std::string(dtype) + "\",\"shape\":" + std::string(shape) +
        ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

uint64_t header_offset(std::string_view header, std::string_view needle, size_t nth) {
    size_t at = header.find(needle);
    for (size_t i = 0; i < nth && at != std::string_view::npos; ++i) at = header.find(needle, at + 1);
    REQUIRE(at != std::string_view::npos);
    return 8 + at;
}

std::string s1_header() { return "{" + st_entry("w", "F32", "[2]", 0, 8) + "}"; }

std::vector<uint8_t> s1_bytes() {
    float values[2] = {1.5f, -2.0f};
    std::vector<uint8_t> data(8);
    std::memcpy(data.data(), values, 8);
    return safetensors_bytes(s1_header() + "  ", data);
}

SafetensorsBuilder& SafetensorsBuilder::metadata(std::string_view key, std::string_view value) {
    m_metadata.push_back("\"" + std::string(key) + "\":\"" + std::string(value) + "\"");
    return *this;
}

SafetensorsBuilder& SafetensorsBuilder::tensor(std::string_view name, std::string_view dtype, std::string_view shape,
                                               const std::vector<uint8_t>& bytes) {
    m_entries.push_back(st_entry(name, dtype, shape, m_data.size(), m_data.size() + bytes.size()));
    m_data.insert(m_data.end(), bytes.begin(), bytes.end());
    return *this;
}

std::string SafetensorsBuilder::header() const {
    std::string h = "{";
    if (!m_metadata.empty()) {
        h += "\"__metadata__\":{";
        for (size_t i = 0; i < m_metadata.size(); ++i) h += (i ? "," : "") + m_metadata[i];
        h += "}";
    }
    for (const std::string& e : m_entries) h += (h.size() > 1 ? "," : "") + e;
    h += "}";
    while ((8 + h.size()) % 8 != 0) h += ' ';
    return h;
}

std::vector<uint8_t> SafetensorsBuilder::bytes() const { return safetensors_bytes(header(), m_data); }

void require_rejected(const Model& model, const std::string& code, const std::string& field, std::optional<uint64_t> offset) {
    for (const Diagnostic& d : model.diagnostics) UNSCOPED_INFO(d.to_line());
    REQUIRE(model.partial);
    REQUIRE(model.error_count() == 1);
    for (const Diagnostic& d : model.diagnostics) {
        if (d.severity != Severity::error) continue;
        INFO(d.to_line());
        CHECK(d.format == "safetensors");
        CHECK(code_name(d.code) == code);
        CHECK(d.field == field);
        CHECK(d.offset == offset);
    }
}

Model require_rejected(const std::vector<uint8_t>& bytes, const std::string& code, const std::string& field,
                       std::optional<uint64_t> offset) {
    Model model = read_safetensors(memory_source(bytes));
    require_rejected(model, code, field, offset);
    return model;
}

Model require_accepted(const std::vector<uint8_t>& bytes, size_t warnings) {
    Model model = read_safetensors(memory_source(bytes));
    for (const Diagnostic& d : model.diagnostics) UNSCOPED_INFO(d.to_line());
    REQUIRE(model.error_count() == 0);
    REQUIRE(!model.partial);
    REQUIRE(model.warning_count() == warnings);
    return model;
}

}  // namespace mlens::test
