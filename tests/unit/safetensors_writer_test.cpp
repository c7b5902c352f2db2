// The safetensors writer: canonical bytes, read-then-write identity, GGUF input, refusals.
#include <catch2/catch.hpp>

#include <filesystem>

#include "gguf_builder.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/formats/safetensors_dtype.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/formats/safetensors_writer.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using test::safetensors_bytes;
using test::st_entry;

namespace {

Model open_ok(const std::string& path) {
    auto m = open_safetensors(path);
    REQUIRE(m.ok());
    for (const Diagnostic& d : m->diagnostics) UNSCOPED_INFO(d.to_line());
    REQUIRE(m->error_count() == 0);
    return std::move(m).value();
}

size_t files_in(const std::string& dir) {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.exists();
    return n;
}

}  // namespace

TEST_CASE("writing S1 gives S1 back byte for byte", "[safetensors][writer]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("in.safetensors"), test::s1_bytes());
    Model m = open_ok(dir.file("in.safetensors"));
    REQUIRE(write_safetensors(m, dir.file("out.safetensors")).ok());
    CHECK(test::read_whole_file(dir.file("out.safetensors")) == test::s1_bytes());
    auto header = safetensors_header_text(m);
    REQUIRE(header.ok());
    CHECK(*header == test::s1_header() + "  ");
}

TEST_CASE("the 22-dtype file round-trips, and a second write is identical", "[safetensors][writer]") {
    const char* names[] = {"BOOL", "F4",  "F6_E2M3", "F6_E3M2", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ",
                           "I16",  "U16", "F16",     "BF16",    "I32", "U32", "F32",     "C64",     "F64",     "I64",         "U64"};
    test::SafetensorsBuilder b;
    for (size_t i = 0; i < 22; ++i) {
        std::vector<uint8_t> data(safetensors_dtype_bits(*safetensors_dtype_from_name(names[i])));  // 8 elements
        for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(i * 31 + k);
        b.tensor(names[i], names[i], "[8]", data);
    }
    test::TempDir dir;
    test::write_whole_file(dir.file("in.safetensors"), b.bytes());
    Model m = open_ok(dir.file("in.safetensors"));
    REQUIRE(write_safetensors(m, dir.file("once.safetensors")).ok());
    CHECK(test::read_whole_file(dir.file("once.safetensors")) == b.bytes());
    Model again = open_ok(dir.file("once.safetensors"));
    REQUIRE(write_safetensors(again, dir.file("twice.safetensors")).ok());
    CHECK(test::read_whole_file(dir.file("twice.safetensors")) == test::read_whole_file(dir.file("once.safetensors")));
}

TEST_CASE("metadata and names that need escaping round-trip", "[safetensors][writer]") {
    std::string h = "{\"__metadata__\":{\"format\":\"pt\",\"q\\\"\\\\\":\"line\\nbreak\\u0001\\u00e9\xc3\xa9\\/\"}," +
        st_entry("\\u0000\\t\xe2\x80\xae", "F16", "[1,2]", 0, 4) + "," + st_entry("", "F32", "[]", 4, 8) + "," +
        st_entry("z", "I64", "[0]", 8, 8) + "}";
    test::TempDir dir;
    test::write_whole_file(dir.file("in.safetensors"), safetensors_bytes(h, 8));
    Model m = open_ok(dir.file("in.safetensors"));
    REQUIRE(write_safetensors(m, dir.file("once.safetensors")).ok());
    Model once = open_ok(dir.file("once.safetensors"));
    REQUIRE(once.metadata.size() == 2);
    CHECK(once.metadata[1].key == "q\"\\");
    CHECK(once.metadata[1].value.text == "line\nbreak\x01\xc3\xa9\xc3\xa9/");
    REQUIRE(once.tensors.size() == 3);
    CHECK(once.tensors[0].name == std::string("\0\t\xe2\x80\xae", 5));
    CHECK(once.tensors[0].ne == std::vector<uint64_t>{2, 1});
    CHECK(once.tensors[1].ne.empty());
    CHECK(once.files[0].data_start % 8 == 0);
    REQUIRE(write_safetensors(once, dir.file("twice.safetensors")).ok());
    CHECK(test::read_whole_file(dir.file("twice.safetensors")) == test::read_whole_file(dir.file("once.safetensors")));
}

TEST_CASE("a GGUF model with plain types is written as safetensors", "[safetensors][writer]") {
    test::GgufBuilder g;
    g.header(2, 2).kv_string("general.architecture", "llama").kv_u32("llama.block_count", 1);
    g.tensor_info("m", {4, 2}, 0, 0).tensor_info("h", {3}, 1, 32).pad_to(32);
    g.f32_run(8).zeros(6).pad_to(32);
    test::TempDir dir;
    test::write_whole_file(dir.file("in.gguf"), g.bytes);
    auto gguf = open_gguf(dir.file("in.gguf"));
    REQUIRE(gguf.ok());
    REQUIRE(gguf->error_count() == 0);
    REQUIRE(write_safetensors(*gguf, dir.file("out.safetensors")).ok());
    Model m = open_ok(dir.file("out.safetensors"));
    REQUIRE(m.metadata.size() == 1);  // strings only
    CHECK(m.get_string("general.architecture") == "llama");
    REQUIRE(m.tensors.size() == 2);
    CHECK(m.tensors[0].type.name == "F32");
    CHECK(m.tensors[0].ne == std::vector<uint64_t>{4, 2});
    CHECK(shape_row_major(m.tensors[0]) == std::vector<uint64_t>{2, 4});
    CHECK(m.tensors[1].type.name == "F16");
    CHECK(m.tensors[1].n_bytes == 6u);
    float v[8];
    REQUIRE(m.read_tensor_bytes(0, 0, sizeof v, v).ok());
    CHECK(v[7] == 7.0f);
}

TEST_CASE("the writer refuses what safetensors cannot hold and leaves nothing behind", "[safetensors][writer]") {
    test::TempDir dir;
    SECTION("a quantized GGUF tensor") {
        test::GgufBuilder g;
        g.header(1, 0).tensor_info("q", {32}, 8, 0).pad_to(32).zeros(34);  // Q8_0
        test::write_whole_file(dir.file("q.gguf"), g.bytes);
        auto gguf = open_gguf(dir.file("q.gguf"));
        REQUIRE(gguf.ok());
        Status s = write_safetensors(*gguf, dir.file("out.safetensors"));
        REQUIRE(!s.ok());
        CHECK(s.error().code == ErrorCode::E_UNSUPPORTED_TYPE);
        CHECK(s.error().field == "q");
    }
    SECTION("its own input") {
        test::write_whole_file(dir.file("in.safetensors"), test::s1_bytes());
        Model m = open_ok(dir.file("in.safetensors"));
        Status s = write_safetensors(m, dir.file("in.safetensors"));
        REQUIRE(!s.ok());
        CHECK(s.error().code == ErrorCode::E_OUTPUT_IS_INPUT);
        CHECK(test::read_whole_file(dir.file("in.safetensors")) == test::s1_bytes());
    }
    SECTION("a tensor named __metadata__") {
        test::write_whole_file(dir.file("in.safetensors"), test::s1_bytes());
        Model m = open_ok(dir.file("in.safetensors"));
        m.tensors[0].name = "__metadata__";
        Status s = write_safetensors(m, dir.file("out.safetensors"));
        REQUIRE(!s.ok());
        CHECK(s.error().code == ErrorCode::E_DUPLICATE_KEY);
    }
    CHECK(!std::filesystem::exists(dir.file("out.safetensors")));
    CHECK(files_in(dir.path()) == 1);  // only the input: no temporary file remains
}

TEST_CASE("a sharded folder is written as one file, without its side files", "[safetensors][writer]") {
    test::TempDir dir, out;
    test::SafetensorsBuilder s1, s2;
    s1.metadata("format", "pt").tensor("a", "U8", "[2]", {1, 2});
    s2.metadata("format", "pt").tensor("b", "U8", "[3]", {3, 4, 5});
    test::write_whole_file(dir.file("s1.safetensors"), s1.bytes());
    test::write_whole_file(dir.file("s2.safetensors"), s2.bytes());
    std::string index = "{\"weight_map\":{\"a\":\"s1.safetensors\",\"b\":\"s2.safetensors\"}}";
    test::write_whole_file(dir.file("model.safetensors.index.json"), {index.begin(), index.end()});
    auto folder = open_safetensors_folder(dir.path());
    REQUIRE(folder.ok());
    REQUIRE(folder->error_count() == 0);
    REQUIRE(write_safetensors(*folder, out.file("merged.safetensors")).ok());
    test::SafetensorsBuilder merged;
    merged.metadata("format", "pt").tensor("a", "U8", "[2]", {1, 2}).tensor("b", "U8", "[3]", {3, 4, 5});
    CHECK(test::read_whole_file(out.file("merged.safetensors")) == merged.bytes());
}
