// malformed-inputs.md A4: `mlens check PATH` on GGUF fixtures: exit status 0 accepted / 1 rejected,
// one diagnostic per stderr line as "error: GGUF E_CODE field offset=N: message", the format taken
// from the content, never from the name, and nothing raw from the file on the terminal.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstring>
#include <regex>

#include "cli_runner.h"
#include "diagnostic_checks.h"
#include "gguf_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

// Every stderr line is one diagnostic in the A4 form.
void require_diagnostic_lines(const CliRun& run) {
    static const std::regex kLine(R"(^(error|warning): GGUF [EW]_[A-Z0-9_]+( [^ :]+)?( offset=[0-9]+)?: .+$)");
    INFO("stderr:\n" << run.err);
    for (const std::string& line : run.err_lines()) {
        INFO(line);
        CHECK(std::regex_match(line, kLine));
    }
    CHECK(display_safe(run.err));
    CHECK(display_safe(run.out));
}

bool has_line(const CliRun& run, const std::string& line) {
    for (const std::string& l : run.err_lines())
        if (l == line) return true;
    return false;
}

}  // namespace

TEST_CASE("A4 mlens check accepts T1 with exit status 0 and no diagnostics", "[gguf][malformed][cli]") {
    TempDir dir;
    write_whole_file(dir.file("t1.gguf"), t1_bytes());
    CliRun run = run_mlens({"check", dir.file("t1.gguf")});
    CHECK(run.exit_status == 0);
    CHECK(run.err.empty());
    CHECK(run.out.find("ok (0 errors, 0 warnings)") != std::string::npos);
}

TEST_CASE("A4 mlens check rejects G10 with the exact E_COUNT line", "[gguf][malformed][cli]") {
    TempDir dir;
    auto bytes = t1_bytes();
    uint64_t n = UINT64_MAX;
    std::memcpy(bytes.data() + t1::kNKv, &n, 8);
    write_whole_file(dir.file("g10.gguf"), bytes);
    CliRun run = run_mlens({"check", dir.file("g10.gguf")});
    CHECK(run.exit_status == 1);
    require_diagnostic_lines(run);
    INFO(run.err);
    CHECK(has_line(run,
                   "error: GGUF E_COUNT n_kv offset=16: 18446744073709551615 exceeds max possible 16 "
                   "(232 bytes remaining / 14 bytes per KV)"));
}

TEST_CASE("A4 warnings alone keep exit status 0", "[gguf][malformed][cli]") {
    TempDir dir;
    auto bytes = t1_bytes();
    bytes.resize(bytes.size() + 22);
    write_whole_file(dir.file("g56.gguf"), bytes);
    CliRun run = run_mlens({"check", dir.file("g56.gguf")});
    CHECK(run.exit_status == 0);
    require_diagnostic_lines(run);
    CHECK(has_line(run, "warning: GGUF W_TRAILING_DATA offset=256: 22 bytes after the last tensor"));
}

TEST_CASE("A4 rejections print the field and the offset - hostile bytes never reach the terminal", "[gguf][malformed][cli]") {
    TempDir dir;
    auto magic = t1_bytes();
    std::memcpy(magic.data(), "\x1B[2J", 4);
    write_whole_file(dir.file("magic.gguf"), magic);
    auto truncated = t1_bytes();
    truncated.resize(60);
    write_whole_file(dir.file("cut.gguf"), truncated);
    auto oob = t1_bytes();
    oob.resize(200);
    write_whole_file(dir.file("oob.gguf"), oob);
    write_whole_file(dir.file("names.gguf"), t1_plus_kvs(2, [](GgufBuilder& b) {
                         b.kv_u8("general.\x1B[31mred", 1).kv_string("general.name", "\xE2\x80\xAEgnp.exe\x1B]0;pwned\x07");
                     }));
    struct Case {
        const char* file;
        int status;
        const char* prefix;
    };
    for (const Case& c : {Case{"cut.gguf", 1, "error: GGUF E_TRUNCATED kv[0].value offset=56: "},
                          Case{"oob.gguf", 1, "error: GGUF E_TRUNCATED_DATA data offset=200: "},
                          Case{"names.gguf", 0, "warning: GGUF W_KEY_CHARSET kv[1].key offset=69: "}}) {
        INFO(c.file);
        CliRun run = run_mlens({"check", dir.file(c.file)});
        CHECK(run.exit_status == c.status);
        require_diagnostic_lines(run);
        REQUIRE(!run.err_lines().empty());
        CHECK(run.err_lines()[0].starts_with(c.prefix));
    }
    // A file that does not start like any model is named as such, its first bytes escaped.
    CliRun not_model = run_mlens({"check", dir.file("magic.gguf")});
    CHECK(not_model.exit_status == 1);
    CHECK(not_model.err ==
          "error: " + dir.file("magic.gguf") +
              ": E_NOT_A_MODEL offset=0: not a model file: 256 bytes, "
              "starts with \"\\x1B[2J\\x03\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\"\xE2\x80\xA6\n");
    CHECK(display_safe(not_model.err));
}

TEST_CASE("A4 the format comes from the content, never from the file name", "[gguf][malformed][cli]") {
    TempDir dir;
    for (const char* name : {"model.bin", "model.safetensors", "model"}) {
        INFO(name);
        write_whole_file(dir.file(name), t1_bytes());
        CHECK(run_mlens({"check", dir.file(name)}).exit_status == 0);
    }
    auto bad = t1_bytes();
    std::memcpy(bad.data(), "XXXX", 4);
    write_whole_file(dir.file("bad.gguf"), bad);
    CliRun run = run_mlens({"check", dir.file("bad.gguf")});
    CHECK(run.exit_status == 1);
    CHECK(run.err.find("E_NOT_A_MODEL offset=0: not a model file: 256 bytes, starts with \"XXXX") != std::string::npos);
}

TEST_CASE("A4 a missing shard is reported without an offset", "[gguf][malformed][cli]") {
    TempDir dir;
    write_whole_file(dir.file("m-00001-of-00002.gguf"), t1_plus_kvs(2, [](GgufBuilder& b) {
                         b.kv("split.no", ValueType::u16).u16(0);
                         b.kv("split.count", ValueType::u16).u16(2);
                     }));
    CliRun run = run_mlens({"check", dir.file("m-00001-of-00002.gguf")});
    CHECK(run.exit_status == 1);
    require_diagnostic_lines(run);
    REQUIRE(!run.err_lines().empty());
    CHECK(run.err_lines()[0].starts_with("error: GGUF E_SPLIT_MISSING split: shard 2 of 2"));
}

TEST_CASE("A4 a FIFO path is refused at once", "[gguf][malformed][cli]") {
    TempDir dir;
    REQUIRE(::mkfifo(dir.file("fifo.gguf").c_str(), 0600) == 0);
    CliRun run = run_mlens({"check", dir.file("fifo.gguf")});
    CHECK(run.exit_status == 1);
    CHECK(run.err.find("E_NOT_REGULAR_FILE") != std::string::npos);
}
