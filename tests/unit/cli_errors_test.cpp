// The error contract of mlens (app/cli/cli_error.h): usage errors exit 2 whichever command finds
// them, --json failures print one error object, and every message names the file it is about —
// model B of a comparison, and the blob of a store model. The schema of every command's error
// object is checked by tests/schemas/check_json_schemas.py.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const std::string kModel = std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf";
const std::string kStore = std::string(MLENS_DEMO_DIR) + "/ollama-store";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void write_text(const std::string& path, const std::string& text) {
    write_whole_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// The one JSON value on stdout, which must be an error object.
nlohmann::json error_object(const CliRun& run) {
    nlohmann::json out = nlohmann::json::parse(run.out);
    REQUIRE(out.is_object());
    REQUIRE(out.size() == 1);
    REQUIRE(out.contains("error"));
    return out["error"];
}

}  // namespace

TEST_CASE("a bad option value is a usage error, exit status 2, whichever command finds it", "[cli][cli_errors]") {
    const std::vector<std::vector<std::string>> cases = {
        {"memory", kModel, "--kv-type", "bogus"},
        {"hist", kModel, "output_norm.weight", "--range", "2", "1"},
        {"requant", kModel, "output_norm.weight", "--types", "Q9_9"},
        {"export", "tiny-llama:q4_0", "--store", kStore, "--dry-run", "--format", "zip"},
        {"export", "tiny-llama:q4_0", "--store", kStore, "--dry-run", "--dtype", "f8"},
        {"store", kStore, "bad/na:me/x/y"},
        {"info", kModel, "--bogus"},
        {"layer-divergence", kModel, kModel, "-p", "Hello", "--names", "bogus"},
        {"layers", kModel, "-p", "Hello", "--names", "bogus,nothing"},
    };
    for (std::vector<std::string> args : cases) {
        INFO(args[0] << " " << args.back());
        CliRun text = run_mlens(args);
        INFO(text.err);
        CHECK(text.exit_status == 2);
        CHECK(text.out.empty());
        CHECK_FALSE(text.err.empty());
        args.push_back("--json");
        CliRun json = run_mlens(args);
        CHECK(json.exit_status == 2);
        nlohmann::json e = error_object(json);
        CHECK(e["code"] == "E_USAGE");
        CHECK_FALSE(e["message"].get<std::string>().empty());
    }
}

TEST_CASE("with --json, a failure prints one error object naming the file, and the line on stderr", "[cli][cli_errors]") {
    TempDir dir;
    write_text(dir.file("notes.txt"), "no model here\n");
    CliRun run = run_mlens({"info", dir.file("notes.txt"), "--json"});
    CHECK(run.exit_status == 1);
    nlohmann::json e = error_object(run);
    CHECK(e["code"] == "E_NOT_A_MODEL");
    CHECK(e["path"] == dir.file("notes.txt"));
    CHECK(e["offset"] == 0);
    CHECK(run.err_lines().at(0).starts_with("error: " + dir.file("notes.txt") + ": E_NOT_A_MODEL offset=0: "));

    // A result printed is the one JSON value: the errors of a damaged file stay diagnostics.
    CliRun listing = run_mlens({"store", kStore, "--json"});
    CHECK(listing.exit_status == 0);
    CHECK_FALSE(nlohmann::json::parse(listing.out).contains("error"));

    // A missing tensor names the file and the tensor.
    CliRun stats = run_mlens({"stats", kModel, "no.such.tensor", "--json"});
    CHECK(stats.exit_status == 1);
    nlohmann::json s = error_object(stats);
    CHECK(s["path"] == kModel);
    CHECK(contains(s["message"], "no.such.tensor"));
    CHECK(contains(stats.err, "error: " + kModel + ": no.such.tensor: "));
}

TEST_CASE("a missing model B is named, with its path, by ab, kld and layer-divergence", "[cli][cli_errors][infer]") {
    TempDir dir;
    write_text(dir.file("text.txt"), std::string(2000, 'a'));
    const std::string b = dir.file("missing-b.gguf");
    const std::vector<std::vector<std::string>> commands = {
        {"ab", kModel, b, "-p", "Hello", "--json"},
        {"layer-divergence", kModel, b, "-p", "Hello", "--json"},
        {"kld", kModel, b, "--text", dir.file("text.txt"), "--ctx", "32", "--json"},
    };
    for (const auto& args : commands) {
        INFO(args[0]);
        CliRun run = run_mlens(args);
        INFO(run.err);
        CHECK(run.exit_status == 1);
        nlohmann::json e = error_object(run);
        CHECK(e["path"] == b);
        CHECK(contains(e["message"], "model B: "));
        CHECK(contains(run.err, "error: " + b + ": "));
        CHECK(contains(run.err, "model B: "));
        CHECK_FALSE(contains(run.err, "cannot examine the file:\n"));
    }
}

TEST_CASE("check and fsck of a store model name the failing blob: layer, media type, digest, reason", "[cli][cli_errors][ollama]") {
    TempDir dir;
    OllamaStoreBuilder store(dir.path());
    const LayerSpec config = store.blob(kImageConfigMediaType, config_json("gguf", "llama", "F32"));
    const LayerSpec not_gguf = store.blob(kModelMediaType, std::string("NOTGGUF") + std::string(100, '\0'));
    store.add_model("badmagic", {not_gguf}, config_json("gguf", "llama", "F32"));
    const LayerSpec absent(std::string(kModelMediaType), "sha256:" + std::string(64, 'a'), 10);
    store.add_model("noblob", {absent}, config_json("gguf", "llama", "F32"));
    struct Case {
        std::string model;
        const LayerSpec& layer;
        std::string reason;
    };
    for (const Case& c : {Case{"badmagic", not_gguf, "E_BAD_MAGIC"}, Case{"noblob", absent, "E_BLOB_MISSING"}})
        for (const char* command : {"check", "fsck"}) {
            INFO(command << " " << c.model);
            CliRun run = run_mlens({command, dir.path() + "/" + c.model + ":latest"});
            INFO(run.err);
            CHECK(run.exit_status == 1);
            CHECK(contains(run.err, c.reason));
            CHECK(contains(run.err, "(layers[0]: " + std::string(kModelMediaType) + " " + c.layer.digest + ")"));
        }
}
