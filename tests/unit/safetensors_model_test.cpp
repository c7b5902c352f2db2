// How a safetensors file maps onto the Model: S1 field by field, __metadata__, partial results,
// content detection, cancellation, and the mlens CLI on safetensors fixtures.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>

#include "build_paths.h"
#include "gguf_builder.h"
#include "mlens/formats/safetensors_dtype.h"
#include "mlens/formats/safetensors_reader.h"
#include "mlens/open/target.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using test::header_offset;
using test::require_accepted;
using test::safetensors_bytes;
using test::st_entry;

namespace {

struct CliRun {
    int status = -1;
    std::string output;  // stdout and stderr
};

CliRun run_cli(const std::string& args) {
    CliRun r;
    std::string command = std::string(MLENS_CLI_PATH) + " " + args + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
    int status = ::pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace

TEST_CASE("S1 parses with every field and byte range", "[safetensors]") {
    auto bytes = test::s1_bytes();
    REQUIRE(bytes.size() == 72);
    Model m = require_accepted(bytes);
    CHECK(m.format == Format::safetensors);
    REQUIRE(m.files.size() == 1);
    CHECK(m.files[0].data_start == 64);
    CHECK(m.files[0].header_bytes == 64);
    CHECK(m.files[0].alignment == 1);
    CHECK(m.metadata.empty());
    REQUIRE(m.tensors.size() == 1);
    const TensorInfo& t = m.tensors[0];
    CHECK(t.name == "w");
    CHECK(t.type.name == "F32");
    CHECK(t.type.id == static_cast<uint32_t>(SafetensorsDtype::f32));
    CHECK(t.type.block_size == 1);
    CHECK(t.type.block_bytes == 4);
    CHECK(t.ne == std::vector<uint64_t>{2});
    CHECK(t.n_elements == 2);
    CHECK(t.n_bytes == 8u);
    CHECK(t.relative_offset == 0);
    CHECK(t.data_offset == 64);
    CHECK(t.info_range.offset == 9);
    CHECK(t.info_range.end() == 61);
    CHECK(t.file == 0);
    float v[2];
    REQUIRE(m.read_tensor_bytes(0, 0, 8, v).ok());
    CHECK(v[0] == 1.5f);
    CHECK(v[1] == -2.0f);
}

TEST_CASE("ne is the safetensors shape reversed", "[safetensors]") {
    std::string h = "{" + st_entry("w", "U8", "[2,3,4]", 0, 24) + "}";
    Model m = require_accepted(safetensors_bytes(h, 24));
    CHECK(m.tensors[0].ne == std::vector<uint64_t>{4, 3, 2});
    CHECK(shape_row_major(m.tensors[0]) == std::vector<uint64_t>{2, 3, 4});
}

TEST_CASE("__metadata__ strings become STRING entries with JSON byte ranges", "[safetensors]") {
    std::string h = "{\"__metadata__\":{\"format\":\"pt\",\"a\\nb\":\"x\\\"y\\u00e9\"}," + st_entry("w", "F32", "[2]", 0, 8) + "}";
    Model m = require_accepted(safetensors_bytes(h, 8));
    REQUIRE(m.metadata.size() == 2);
    const MetadataEntry& f = m.metadata[0];
    CHECK(f.key == "format");
    CHECK(f.value.type == ValueType::string);
    CHECK(f.value.text == "pt");
    CHECK(f.key_range.offset == header_offset(h, "\"format\""));
    CHECK(f.key_range.length == 8);
    CHECK(f.value_range.offset == header_offset(h, "\"pt\""));
    CHECK(f.value_range.length == 4);
    CHECK(f.type_range.offset == f.value_range.offset);
    CHECK(f.type_range.length == 0);
    CHECK(m.get_string("format") == "pt");
    CHECK(m.metadata[1].key == "a\nb");
    CHECK(m.metadata[1].value.text == "x\"y\xc3\xa9");
}

TEST_CASE("long __metadata__ values stay in the file unless they hold escapes", "[safetensors]") {
    std::string plain(Value::kInlineStringBytes + 10, 'v');
    std::string escaped = plain + "\\n";
    std::string h = "{\"__metadata__\":{\"plain\":\"" + plain + "\",\"escaped\":\"" + escaped + "\"}}";
    Model m = require_accepted(safetensors_bytes(h, 0));
    REQUIRE(m.metadata.size() == 2);
    REQUIRE(m.metadata[0].value.lazy_text);
    CHECK(m.metadata[0].value.lazy_text->offset == header_offset(h, "\"vvv") + 1);
    CHECK(m.metadata[0].value.string_length() == plain.size());
    CHECK(m.metadata[0].value.string_value(3) == "vvv");
    CHECK(!m.metadata[1].value.lazy_text);
    CHECK(m.metadata[1].value.text == plain + "\n");
}

TEST_CASE("a damaged header keeps what parsed completely", "[safetensors]") {
    std::string h = "{\"__metadata__\":{\"k\":\"v\"}," + st_entry("a", "F32", "[2]", 0, 8) + ",\"b\":{\"dtype\":\"F32\",";
    Model m = read_safetensors(memory_source(safetensors_bytes(h, 8)));
    test::require_rejected(m, "InvalidHeaderDeserialization", "header", 8 + h.size());
    REQUIRE(m.metadata.size() == 1);
    CHECK(m.metadata[0].key == "k");
    REQUIRE(m.tensors.size() == 1);
    CHECK(m.tensors[0].name == "a");
    CHECK(m.tensors[0].n_bytes == 8u);
    CHECK(m.tensors[0].data_offset == 8 + h.size());
}

TEST_CASE("a cancelled parse stops with E_CANCELLED", "[safetensors]") {
    std::string h = "{";
    for (int i = 0; i < 70000; ++i) h += (i ? "," : "") + st_entry("t" + std::to_string(i), "F32", "[0]", 0, 0);
    h += "}";
    JobContext job;
    job.cancel();
    Model m = read_safetensors(memory_source(safetensors_bytes(h, 0)), {}, &job);
    REQUIRE(m.partial);
    CHECK(m.diagnostics.back().code == ErrorCode::E_CANCELLED);
    CHECK(m.tensors.size() < 70000);
}

TEST_CASE("open_model tells safetensors from GGUF by content", "[safetensors]") {
    test::TempDir dir;
    auto open = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
        test::write_whole_file(dir.file(name), bytes);
        auto m = open_model(dir.file(name));
        REQUIRE(m.ok());
        return std::move(m).value();
    };
    CHECK(open("s1.gguf", test::s1_bytes()).format == Format::safetensors);  // the name does not matter
    CHECK(open("t1.safetensors", test::t1_bytes()).format == Format::gguf);
    Model n0 = open("n0", safetensors_bytes("", 8));
    CHECK(n0.format == Format::safetensors);
    CHECK(n0.diagnostics.back().code == ErrorCode::InvalidHeaderDeserialization);
    Model not_object = open("array", safetensors_bytes("[]", 0));
    CHECK(not_object.diagnostics.back().code == ErrorCode::InvalidHeaderStart);
    Model huge = open("huge", safetensors_bytes("{}", {}, 1ull << 40));  // '{' follows the length
    CHECK(huge.diagnostics.back().code == ErrorCode::HeaderTooLarge);
    test::write_whole_file(dir.file("tiny"), {1, 2, 3});  // too short to be either
    auto tiny = open_model(dir.file("tiny"));
    REQUIRE_FALSE(tiny.ok());
    CHECK(tiny.error().code == ErrorCode::E_NOT_A_MODEL);
}

TEST_CASE("mlens check, info, kv and tensors on safetensors fixtures", "[safetensors][cli]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("s1.safetensors"), test::s1_bytes());
    std::string reversed = "{" + st_entry("w", "F32", "[2]", 8, 0) + "}";
    test::write_whole_file(dir.file("s21.safetensors"), safetensors_bytes(reversed, 8));
    std::string names =
        "{\"__metadata__\":{\"note\":\"\xe2\x80\xae\\u001b[2J\"}," + st_entry("\xe2\x80\xae\\u0007", "F32", "[0]", 0, 0) + "}";
    test::write_whole_file(dir.file("names.safetensors"), safetensors_bytes(names, 0));

    CliRun ok = run_cli("check " + dir.file("s1.safetensors"));
    CHECK(ok.status == 0);
    CHECK_THAT(ok.output, Catch::Contains("ok (0 errors, 0 warnings)"));

    CliRun bad = run_cli("check " + dir.file("s21.safetensors"));
    CHECK(bad.status != 0);
    CHECK_THAT(bad.output,
               Catch::Contains(
                   "error: safetensors InvalidOffset w.data_offsets offset=" + std::to_string(header_offset(reversed, "[8,0]")) + ":"));

    CliRun info = run_cli("info " + dir.file("s1.safetensors"));
    CHECK(info.status == 0);
    CHECK_THAT(info.output, Catch::Contains("safetensors"));
    CliRun tensors = run_cli("tensors " + dir.file("s1.safetensors"));
    CHECK(tensors.status == 0);
    CHECK_THAT(tensors.output, Catch::Contains("F32"));

    for (const char* cmd : {"kv ", "tensors ", "check "}) {
        CliRun r = run_cli(cmd + dir.file("names.safetensors"));
        INFO(r.output);
        CHECK(r.status == 0);
        CHECK(r.output.find("\xe2\x80\xae") == std::string::npos);
        CHECK(r.output.find('\x1b') == std::string::npos);
        CHECK(r.output.find('\a') == std::string::npos);
    }
}

TEST_CASE("a format's label carries a version only where the format has one", "[safetensors]") {
    CHECK(format_and_version(Format::gguf, 3) == "GGUF v3");
    CHECK(format_and_version(Format::gguf, 1) == "GGUF v1");
    CHECK(format_and_version(Format::safetensors, 0) == "safetensors");
    CHECK(format_and_version(Format::unknown, 0) == "unknown");
}
