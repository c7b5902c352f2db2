// Every mlens command takes its PATH through the one resolver: a file that is no model is named as
// such, a cut file exits 1 with its summary on stderr and its tensors marked, and store references
// work in every command, inference and `show STORE/MODEL:TAG` included.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "gguf_builder.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const std::string kDemoStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

// Three F32[16] tensors a, b, c at data offsets 0, 64, 128 (data from byte 128), cut at 224.
std::vector<uint8_t> cut_gguf() {
    GgufBuilder b;
    b.header(3, 0);
    b.tensor_info("a", {16}, 0, 0).tensor_info("b", {16}, 0, 64).tensor_info("c", {16}, 0, 128);
    b.pad_to(32);
    b.f32_run(48);
    b.bytes.resize(224);
    return b.bytes;
}

}  // namespace

TEST_CASE("every model command names a file that is no model and exits 1", "[cli][open]") {
    TempDir dir;
    write_whole_file(dir.file("passwd"), std::vector<uint8_t>{'r', 'o', 'o', 't', ':', 'x', ':', '0', ':', '0', ':', '\n'});
    write_whole_file(dir.file("empty.safetensors"), {});
    for (const char* command : {"info", "kv", "tensors", "dump", "check", "stats", "compat"}) {
        INFO(command);
        std::vector<std::string> args = {command, dir.file("passwd")};
        if (std::string(command) == "stats") args.push_back("w");
        CliRun run = run_mlens(args);
        CHECK(run.exit_status == 1);
        CHECK(run.out.empty());
        CHECK(run.err ==
              "error: " + dir.file("passwd") + ": E_NOT_A_MODEL offset=0: not a model file: 12 bytes, starts with \"root:x:0:0:\\x0A\"\n");
    }
    CliRun empty = run_mlens({"info", dir.file("empty.safetensors")});
    CHECK(empty.exit_status == 1);
    CHECK(empty.err == "error: " + dir.file("empty.safetensors") + ": E_NOT_A_MODEL offset=0: empty file (0 bytes)\n");
}

TEST_CASE("a cut file exits 1 from every reading command with its summary first", "[cli][open]") {
    TempDir dir;
    write_whole_file(dir.file("cut.gguf"), cut_gguf());
    const std::string summary =
        "error: GGUF E_TRUNCATED_DATA data offset=224: file ends at 224 of 320 bytes: "
        "96 bytes of tensor data missing; 2 of 3 tensors affected";
    for (const char* command : {"info", "kv", "tensors", "dump"}) {
        INFO(command);
        CliRun run = run_mlens({command, dir.file("cut.gguf")});
        CHECK(run.exit_status == 1);
        // The summary is the file's one error as listed: it stands for the tensors' out-of-bounds rows.
        REQUIRE(run.err_lines().size() == 1);
        CHECK(run.err_lines()[0] == summary);
    }
    CliRun check = run_mlens({"check", dir.file("cut.gguf")});
    CHECK(check.exit_status == 1);
    // The summary stands for the tensors' out-of-bounds rows; stdout lists the cut tensors under it.
    REQUIRE(check.err_lines().size() == 1);
    CHECK(check.err_lines()[0] == summary);
    CHECK(check.out.starts_with("  cut b: 32 of 64 bytes present\n  cut c: 0 of 64 bytes present\n"));
    CHECK(check.out.find("rejected (1 error, 0 warnings)") != std::string::npos);
    // fsck counts the same error: the cut tensors are rows under the summary, not errors of their own.
    CliRun fsck = run_mlens({"fsck", dir.file("cut.gguf")});
    CHECK(fsck.exit_status == 1);
    CHECK(fsck.out.find(": broken (1 error, ") != std::string::npos);

    CliRun stats = run_mlens({"stats", dir.file("cut.gguf"), "a"});  // a is whole: its statistics print
    CHECK(stats.exit_status == 1);
    CHECK(stats.out.find("count") != std::string::npos);

    CliRun tensors = run_mlens({"tensors", dir.file("cut.gguf")});
    CHECK(tensors.out ==
          "NAME  TYPE  SHAPE (ne)  ELEMENTS  BYTES  OFFSET  BPW    DATA\n"
          "a     F32   [16]              16     64     128  32.00  complete\n"
          "b     F32   [16]              16     64     192  32.00  partial\n"
          "c     F32   [16]              16     64     256  32.00  missing\n");
    CliRun json = run_mlens({"tensors", dir.file("cut.gguf"), "--json"});
    nlohmann::json j = nlohmann::json::parse(json.out);
    CHECK(j[0]["data"] == "complete");
    CHECK(j[1]["data"] == "partial");
    CHECK(j[2]["data"] == "missing");
}

TEST_CASE("check and store resolve store roots by one rule", "[cli][open]") {
    TempDir dir;
    std::filesystem::create_directories(dir.file("blobs-only/blobs"));
    CliRun check = run_mlens({"check", dir.file("blobs-only")});
    CHECK(check.exit_status == 1);
    CHECK(check.err.find("E_NOT_A_MODEL: a folder with blobs/ but no manifests/") != std::string::npos);

    OllamaStoreBuilder store(dir.file("store"));
    store.add_tiny();
    CliRun root = run_mlens({"check", store.root()});
    CHECK(root.exit_status == 0);
    CHECK(root.out.find("(store, 1 model,") != std::string::npos);
}

TEST_CASE("show and info take STORE/MODEL:TAG with no default store", "[cli][open]") {
    TempDir dir, none;
    ScopedEnv env("OLLAMA_MODELS", none.file("absent"));
    OllamaStoreBuilder store(dir.file("store"));
    store.add_tiny();
    CliRun by_path = run_mlens({"show", store.root() + "/tiny:latest"});
    INFO(by_path.err);
    CHECK(by_path.exit_status == 0);
    CliRun by_option = run_mlens({"show", "tiny:latest", "--store", store.root()});
    CHECK(by_option.exit_status == 0);
    CHECK(by_path.out == by_option.out);
    CliRun info = run_mlens({"info", store.root() + "/tiny"});
    CHECK(info.exit_status == 0);
    CHECK(info.out.find("GGUF v3") != std::string::npos);
}

TEST_CASE("inference commands load a store reference's GGUF blob", "[cli][open][infer]") {
    CliRun by_file = run_mlens({"tokenize", std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf", "Hello world", "--json"});
    CliRun by_reference = run_mlens({"tokenize", kDemoStore + "/tiny-llama:q4_0", "Hello world", "--json"});
    INFO(by_reference.err);
    REQUIRE(by_file.exit_status == 0);
    REQUIRE(by_reference.exit_status == 0);
    CHECK(nlohmann::json::parse(by_reference.out)["tokens"] == nlohmann::json::parse(by_file.out)["tokens"]);
}
