#include "diagnostic_checks.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "mlens/formats/gguf_reader.h"

namespace mlens::test {

std::string describe(const Model& m) {
    std::string out = m.partial ? "(partial)\n" : "";
    for (const Diagnostic& d : m.diagnostics) out += d.to_line() + "\n";
    return out.empty() ? "(no diagnostics)" : out;
}

Model read_gguf_bytes(std::vector<uint8_t> bytes) { return read_gguf(memory_source(std::move(bytes))); }

const Diagnostic* first_error(const Model& m) {
    for (const Diagnostic& d : m.diagnostics)
        if (d.severity == Severity::error) return &d;
    return nullptr;
}

const Diagnostic* find_diagnostic(const Model& m, const std::string& code) {
    for (const Diagnostic& d : m.diagnostics)
        if (code_name(d.code) == code) return &d;
    return nullptr;
}

void require_error(const Model& m, const std::string& code, const std::string& field, std::optional<uint64_t> offset) {
    INFO("diagnostics:\n" << describe(m));
    const Diagnostic* e = first_error(m);
    REQUIRE(e != nullptr);
    CHECK(e->format == "GGUF");
    CHECK(code_name(e->code) == code);
    CHECK(e->field == field);
    CHECK(e->offset == offset);
    CHECK(!e->message.empty());
}

void require_accepted(const Model& m, std::vector<std::string> warnings) {
    INFO("diagnostics:\n" << describe(m));
    REQUIRE(m.error_count() == 0);
    REQUIRE(!m.partial);
    std::vector<std::string> found;
    for (const Diagnostic& d : m.diagnostics) found.emplace_back(code_name(d.code));
    std::sort(found.begin(), found.end());
    std::sort(warnings.begin(), warnings.end());
    REQUIRE(found == warnings);
}

void require_warning(const Model& m, const std::string& code, const std::string& field, std::optional<uint64_t> offset) {
    INFO("diagnostics:\n" << describe(m));
    auto it = std::find_if(m.diagnostics.begin(), m.diagnostics.end(), [&](const Diagnostic& d) {
        return d.severity == Severity::warning && code_name(d.code) == code && d.field == field && d.offset == offset;
    });
    REQUIRE(it != m.diagnostics.end());
}

const TensorInfo& tensor(const Model& m, const std::string& name) {
    const TensorInfo* t = m.find_tensor(name);
    INFO(name);
    REQUIRE(t);
    return *t;
}

bool display_safe(const std::string& s) {
    return s.find('\x1B') == std::string::npos && s.find('\x07') == std::string::npos && s.find('\0') == std::string::npos &&
        s.find("\xE2\x80\xAE") == std::string::npos;
}

}  // namespace mlens::test
