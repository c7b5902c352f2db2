// Invisible format characters from a file (bidi override U+202E, zero-width space U+200B) in a
// key, a string value and a tensor name: `mlens kv`, `tensors` and `info`, as text and as JSON,
// never write them raw, and show the \uXXXX escape instead; the JSON still reads back as the
// file's own strings.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "gguf_builder.h"
#include "mlens/text/escape.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const std::string kRlo = "\xE2\x80\xAE", kZwsp = "\xE2\x80\x8B";
const std::string kKey = "evil" + kRlo + ".key" + kZwsp;
const std::string kValue = "gnp" + kRlo + ".exe" + kZwsp;
const std::string kTensor = "tok" + kRlo + "_embd" + kZwsp + ".weight";

std::string write_fixture(const TempDir& dir) {
    GgufBuilder b;
    b.header(1, 3);
    b.kv_string("general.architecture", "llama");
    b.kv_string("general.name", kValue);
    b.kv_string(kKey, kValue);
    b.tensor_info(kTensor, {4}, 0, 0);
    b.pad_to(32);
    b.f32_run(4);
    const std::string path = dir.file("bidi.gguf");
    write_whole_file(path, b.bytes);
    return path;
}

void check_no_raw(const CliRun& run) {
    INFO(run.out << run.err);
    CHECK(run.out.find(kRlo) == std::string::npos);
    CHECK(run.out.find(kZwsp) == std::string::npos);
    CHECK(run.err.find(kRlo) == std::string::npos);
    CHECK(run.err.find(kZwsp) == std::string::npos);
    CHECK(run.out.find("\\u202E") != std::string::npos);
    CHECK(run.out.find("\\u200B") != std::string::npos);
}

}  // namespace

TEST_CASE("kv, tensors and info escape invisible format characters in text and JSON", "[escape][cli]") {
    TempDir dir;
    const std::string path = write_fixture(dir);
    for (const char* command : {"kv", "tensors", "info"}) {
        INFO(command);
        CliRun text = run_mlens({command, path});
        check_no_raw(text);
        CliRun json = run_mlens({command, path, "--json"});
        check_no_raw(json);
        // The escapes are JSON's own: a reader gets the file's strings back.
        const std::string back = nlohmann::json::parse(json.out).dump();
        CHECK(back.find(kRlo) != std::string::npos);
    }
    CliRun kv = run_mlens({"kv", path, "--json"});
    CHECK(kv.out.find("evil\\u202E.key\\u200B") != std::string::npos);
    CliRun tensors = run_mlens({"tensors", path, "--json"});
    CHECK(tensors.out.find("tok\\u202E_embd\\u200B.weight") != std::string::npos);
}

TEST_CASE("invisible format characters: one set, one escape for text and JSON", "[escape]") {
    for (uint32_t cp : {0x202Au, 0x202Eu, 0x2066u, 0x2069u, 0x200Bu, 0x200Fu, 0x2028u, 0x2029u, 0xFEFFu, 0x061Cu, 0x00ADu, 0x2060u})
        CHECK(is_invisible_format(cp));
    for (uint32_t cp : {0x41u, 0x20u, 0xE9u, 0x4E2Du, 0x1F600u}) CHECK_FALSE(is_invisible_format(cp));
    CHECK(escape_for_display("a" + kRlo + "b" + kZwsp) == "a\\u202Eb\\u200B");
    CHECK(escape_for_display("tag \xF3\xA0\x80\x81") == "tag \\uDB40\\uDC01");
    CHECK(escape_invisible_in_json("{\"k" + kRlo + "\":\"v\xEF\xBB\xBF\"}") == "{\"k\\u202E\":\"v\\uFEFF\"}");
    // Everything else passes through unchanged, invalid bytes included.
    CHECK(escape_invisible_in_json("{\"a\":\"\xC3\xA9\xFF\"}") == "{\"a\":\"\xC3\xA9\xFF\"}");
}
