// The ggml type table against its sources of truth: the linked ggml (names, block sizes),
// llama-quantize's options and llama.cpp's default type per ftype (the ftype names), gguf-py's
// list in the big-endian refusal; and the rule that no switch outside the table's file has a
// ggml type as its subject, checked on the source tree.
#include <catch2/catch.hpp>

#include <ggml.h>
#include <llama.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "build_paths.h"
#include "mlens/formats/ggml_type_table.h"
#include "mlens/formats/gguf_byte_order.h"

// Exported by the linked llama (src/llama-ext.h), which the installed headers do not declare.
ggml_type llama_ftype_get_default_type(llama_ftype ftype);

using namespace mlens;

namespace {

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// The text with comments blanked and string and character literals emptied, so that only code
// is searched.
std::string code_only(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            while (i < text.size() && text[i] != '\n') ++i;
            out += '\n';
        } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            const size_t end = text.find("*/", i + 2);
            i = end == std::string::npos ? text.size() : end + 1;
            out += ' ';
        } else if (c == '"' || c == '\'') {
            ++i;
            while (i < text.size() && text[i] != c) i += text[i] == '\\' ? 2 : 1;
            out += c;
            out += c;
        } else {
            out += c;
        }
    }
    return out;
}

// The text from `open` (an opening bracket) to its matching close, inclusive.
std::string bracketed(const std::string& code, size_t open, char left, char right) {
    int depth = 0;
    for (size_t i = open; i < code.size(); ++i) {
        if (code[i] == left) ++depth;
        if (code[i] == right && --depth == 0) return code.substr(open, i - open + 1);
    }
    return code.substr(open);
}

// The subjects of the switches in `text` that switch over a ggml type: the subject names the
// ggml_type enum (or a GgmlType), or a case label is a GGML_TYPE_ enumerator.
std::vector<std::string> ggml_type_switches(const std::string& text) {
    static const std::regex kSwitch(R"(\bswitch\s*\()");
    static const std::regex kTypeSubject(R"(\bggml_type\b|GgmlType)");
    static const std::regex kTypeCase(R"(\bcase\s+(\w+::)?GGML_TYPE_)");
    const std::string code = code_only(text);
    std::vector<std::string> found;
    for (auto it = std::sregex_iterator(code.begin(), code.end(), kSwitch); it != std::sregex_iterator(); ++it) {
        const size_t open = static_cast<size_t>(it->position() + it->length() - 1);
        const std::string subject = bracketed(code, open, '(', ')');
        const size_t brace = code.find('{', open + subject.size());
        const std::string body = brace == std::string::npos ? "" : bracketed(code, brace, '{', '}');
        if (std::regex_search(subject, kTypeSubject) || std::regex_search(body, kTypeCase)) found.push_back(subject);
    }
    return found;
}

// llama-quantize's options (tools/quantize/quantize.cpp): name -> llama_ftype enumerator name.
std::map<std::string, std::string> quantize_options() {
    const std::string text = read_text(std::filesystem::path(MLENS_LLAMA_SOURCE) / "tools/quantize/quantize.cpp");
    const size_t start = text.find("QUANT_OPTIONS = {");
    REQUIRE(start != std::string::npos);
    const std::string list = text.substr(start, text.find("};", start) - start);
    static const std::regex kOption(R"re(\{\s*"(\w+)",\s*(LLAMA_FTYPE_\w+))re");
    std::map<std::string, std::string> options;
    for (auto it = std::sregex_iterator(list.begin(), list.end(), kOption); it != std::sregex_iterator(); ++it)
        options[(*it)[1]] = (*it)[2];
    return options;
}

// llama_ftype's enumerators (include/llama.h): name -> value.
std::map<std::string, int> ftype_values() {
    const std::string text = read_text(std::filesystem::path(MLENS_LLAMA_SOURCE) / "include/llama.h");
    static const std::regex kValue(R"(\n\s*(LLAMA_FTYPE_\w+)\s*=\s*(\d+))");
    std::map<std::string, int> values;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kValue); it != std::sregex_iterator(); ++it)
        values[(*it)[1]] = std::stoi((*it)[2]);
    return values;
}

}  // namespace

TEST_CASE("the ggml type table has a row for every type the linked ggml knows, with its sizes", "[types]") {
    size_t rows = 0;
    for (uint32_t id = 0; id < GGML_TYPE_COUNT; ++id) {
        const auto type = static_cast<ggml_type>(id);
        const GgmlTypeRow* row = ggml_type_row(id);
        INFO("type " << id);
        if (ggml_blck_size(type) == 0) {
            CHECK(row == nullptr);
            continue;
        }
        REQUIRE(row != nullptr);
        ++rows;
        const ggml_type_traits* traits = ggml_get_type_traits(type);
        CHECK(row->id == id);
        CHECK(row->name == upper(ggml_type_name(type)));
        CHECK(row->block_elements == static_cast<uint32_t>(ggml_blck_size(type)));
        CHECK(row->block_elements == static_cast<uint32_t>(traits->blck_size));
        CHECK(row->block_bytes == ggml_type_size(type));
        CHECK(row->block_bytes == traits->type_size);
        CHECK((row->element != GgmlElement::none) == (row->block_elements == 1));
        CHECK(ggml_is_quantized(type) == (row->element == GgmlElement::none));
        for (const GgmlScaleField& f : row->scales()) {
            CHECK(f.offset + f.count * (f.encoding == ScaleEncoding::f16 ? 2u : f.encoding == ScaleEncoding::f32 ? 4u : 1u) <=
                  row->block_bytes);
            CHECK(row->block_elements % f.covers == 0);
        }
        if (row->big_endian.width != 0) {
            CHECK(row->big_endian.offset + row->big_endian.bytes <= row->block_bytes);
            CHECK(row->big_endian.bytes % row->big_endian.width == 0);
        }
        CHECK((row->range == BlockRangeKind::none || row->scale_series));
    }
    CHECK(ggml_type_rows().size() == rows);
    CHECK(ggml_type_row(GGML_TYPE_COUNT) == nullptr);
    CHECK(ggml_type_row(4) == nullptr);
}

TEST_CASE("a type's ftype names are the llama-quantize options whose default type it is", "[types][recipe]") {
    const std::map<std::string, std::string> options = quantize_options();
    const std::map<std::string, int> values = ftype_values();
    REQUIRE(options.size() > 30);
    std::set<std::string> listed;
    for (const GgmlTypeRow& row : ggml_type_rows())
        for (const char* name : row.ftype_names) {
            if (!name) continue;
            INFO(row.name << " <- " << name);
            REQUIRE(options.count(name));
            REQUIRE(values.count(options.at(name)));
            CHECK(llama_ftype_get_default_type(static_cast<llama_ftype>(values.at(options.at(name)))) == static_cast<ggml_type>(row.id));
            CHECK(listed.insert(name).second);
        }
    // Every option that makes a type, but COPY (F32 kept as it is, not a type of its own).
    for (const auto& [name, ftype] : options) {
        if (name == "COPY") continue;
        INFO(name);
        CHECK(listed.count(name));
    }
    CHECK(ggml_type_row(GGML_TYPE_IQ2_S)->first_ftype() == "IQ2_M");
    CHECK(ggml_type_row(GGML_TYPE_IQ2_XS)->first_ftype() == "IQ2_XS");
}

TEST_CASE("the big-endian refusal names exactly the types with a big-endian layout", "[types][byte-order]") {
    const std::string refusal = big_endian_refusal("X");
    const size_t open = refusal.find("only for "), close = refusal.find(')');
    REQUIRE(open != std::string::npos);
    const std::string list = std::regex_replace(refusal.substr(open + 9, close - open - 9), std::regex(" and "), ", ");
    std::set<std::string> named;
    std::stringstream in(list);
    for (std::string name; std::getline(in, name, ',');) named.insert(name.substr(name.find_first_not_of(' ')));
    std::set<std::string> defined;
    for (const GgmlTypeRow& row : ggml_type_rows())
        if (row.big_endian.defined) defined.insert(row.name);
    CHECK(named == defined);
}

TEST_CASE("the switch scan finds switches over ggml types and nothing else", "[types]") {
    CHECK(ggml_type_switches("switch (static_cast<ggml_type>(id)) { default: break; }").size() == 1);
    CHECK(ggml_type_switches("switch (t) {\n case GGML_TYPE_F32: return 1;\n}").size() == 1);
    CHECK(ggml_type_switches("switch (GgmlType(x)) {}").size() == 1);
    CHECK(ggml_type_switches("switch (row->range) { case BlockRangeKind::q4_0: break; }").empty());
    CHECK(ggml_type_switches("switch (ggml_type_row(t)->element) { case GgmlElement::f32: break; }").empty());
    CHECK(ggml_type_switches("// switch (t) { case GGML_TYPE_F32: }\nint x = 0;").empty());
    CHECK(ggml_type_switches("const char* s = \"switch (t) { case GGML_TYPE_F32: }\";").empty());
}

TEST_CASE("no switch outside the ggml type table has a ggml type as its subject", "[types]") {
    const std::filesystem::path root = MLENS_SOURCE_DIR;
    const std::filesystem::path table = root / "core/src/formats/ggml_type_table.cpp";
    size_t files = 0;
    for (const char* top : {"core", "app"}) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root / top)) {
            const std::string ext = entry.path().extension().string();
            if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".hpp" && ext != ".c")) continue;
            ++files;
            if (entry.path() == table) continue;
            for (const std::string& subject : ggml_type_switches(read_text(entry.path()))) {
                INFO(entry.path().string() << ": switch " << subject);
                CHECK(false);
            }
        }
    }
    CHECK(files > 100);
}
