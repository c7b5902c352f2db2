// The store from the command line: `mlens store` listings and manifests (text and JSON), and
// `mlens check` on a store root with the exit status and diagnostic lines malformed-inputs.md A4
// prescribes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

#include "cli_runner.h"
#include "diagnostic_checks.h"
#include "ollama_store_builder.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

struct CliStore {
    TempDir dir;
    OllamaStoreBuilder b{dir.path()};
    CliStore() { b.add_tiny(); }
    std::string root() const { return dir.path(); }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("mlens store PATH lists the models", "[ollama][cli]") {
    CliStore s;
    CliRun run = run_mlens({"store", s.root()});
    INFO(run.out << run.err);
    CHECK(run.exit_status == 0);
    CHECK(contains(run.out, "tiny:latest"));
    CHECK(contains(run.out, "GGUF"));
    CHECK(contains(run.out, "llama"));
    CHECK(contains(run.out, "F32"));
    CHECK(contains(run.out, "blobs: 2"));
    CHECK(run.err.empty());

    CliRun json = run_mlens({"store", s.root(), "--json"});
    REQUIRE(json.exit_status == 0);
    auto j = nlohmann::json::parse(json.out);
    REQUIRE(j["models"].size() == 1);
    CHECK(j["models"][0]["name"] == "tiny:latest");
    CHECK(j["models"][0]["full_name"] == "registry.ollama.ai/library/tiny:latest");
    CHECK(j["models"][0]["format"] == "gguf");
    CHECK(j["models"][0]["size"] == 256 + s.b.tiny_config_layer().size);
    CHECK(j["models"][0]["ok"] == true);
    CHECK(j["blob_files"].size() == 2);
}

TEST_CASE("mlens store PATH MODEL shows the manifest, layers and text", "[ollama][cli]") {
    CliStore s;
    const char hostile[] = "You are \x1B[31mred\x1B[0m\xE2\x80\xAE and \x07 loud";
    LayerSpec system = s.b.blob(kSystemMediaType, std::string(hostile, sizeof hostile - 1));
    LayerSpec model = s.b.tiny_model_layer();
    model.from = "llama3.2:latest";
    s.b.write_manifest("registry.ollama.ai/library/chat/latest", manifest_json(s.b.tiny_config_layer(), {model, system}));

    CliRun run = run_mlens({"store", s.root(), "chat", "--verify"});
    INFO(run.out << run.err);
    CHECK(run.exit_status == 0);
    CHECK(contains(run.out, "registry.ollama.ai/library/chat:latest"));
    CHECK(contains(run.out, "blobs/sha256-" + model.digest.substr(7)));
    CHECK(contains(run.out, "llama3.2:latest"));
    CHECK(contains(run.out, "VERIFY"));
    CHECK(contains(run.out, "system (" + std::to_string(system.size) + " bytes)"));
    CHECK(contains(run.out, "\\x1B[31mred"));
    CHECK(display_safe(run.out));
    CHECK(display_safe(run.err));

    CliRun json = run_mlens({"store", s.root(), "chat:latest", "--json", "--verify"});
    REQUIRE(json.exit_status == 0);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["format"] == "gguf");
    CHECK(j["config"]["model_family"] == "llama");
    REQUIRE(j["layers"].size() == 2);
    CHECK(j["layers"][0]["kind"] == "model");
    CHECK(j["layers"][0]["verified"] == "ok");
    CHECK(j["layers"][0]["from"] == "llama3.2:latest");
    CHECK(j["layers"][1]["kind"] == "system");
    CHECK(display_safe(j["layers"][1]["text"].get<std::string>()));
    CHECK(j["config_layer"]["verified"] == "ok");
}

TEST_CASE("mlens show and mlens verify name one store model", "[ollama][cli]") {
    CliStore s;
    LayerSpec model = s.b.tiny_model_layer();
    s.b.write_manifest("registry.ollama.ai/library/chat/latest", manifest_json(s.b.tiny_config_layer(), {model}));

    CliRun show = run_mlens({"show", "chat", "--store", s.root()});
    INFO(show.out << show.err);
    CHECK(show.exit_status == 0);
    CHECK(contains(show.out, "registry.ollama.ai/library/chat:latest"));
    CHECK(contains(show.out, "blobs/sha256-" + model.digest.substr(7)));
    CHECK_FALSE(contains(show.out, "VERIFY"));

    CliRun ok = run_mlens({"verify", "chat:latest", "--store", s.root(), "--json"});
    REQUIRE(ok.exit_status == 0);
    auto j = nlohmann::json::parse(ok.out);
    CHECK(j["layers"][0]["verified"] == "ok");
    CHECK(j["config_layer"]["verified"] == "ok");

    // The same size, other content: the digest no longer matches.
    std::string blob = s.root() + "/blobs/sha256-" + model.digest.substr(7);
    {
        std::fstream f(blob, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.put('\x5A');
    }
    CliRun bad = run_mlens({"verify", "chat", "--store", s.root()});
    CHECK(bad.exit_status == 1);
    CHECK(contains(bad.out, "MISMATCH"));
    CHECK(contains(bad.err, "E_DIGEST_MISMATCH"));
    CHECK(run_mlens({"verify"}).exit_status == 2);
}

TEST_CASE("mlens store reports broken and missing models", "[ollama][cli]") {
    CliStore s;
    LayerSpec bad = s.b.tiny_model_layer();
    bad.digest = "sha256:../../etc/passwd";
    s.b.write_manifest("registry.ollama.ai/library/evil/latest", manifest_json(s.b.tiny_config_layer(), {bad}));

    CliRun list = run_mlens({"store", s.root()});
    CHECK(list.exit_status == 1);
    CHECK(contains(list.out, "E_BAD_DIGEST"));
    CHECK(contains(list.err, "error: store E_BAD_DIGEST manifests/registry.ollama.ai/library/evil/latest layers[0].digest offset="));

    CliRun show = run_mlens({"store", s.root(), "evil"});
    CHECK(show.exit_status == 1);
    CHECK(contains(show.err, "E_BAD_DIGEST"));
    CHECK(contains(show.out, "invalid digest"));

    CHECK(run_mlens({"store", s.root(), "nothere"}).exit_status == 1);
    CHECK(run_mlens({"store", s.root(), "bad/na:me/x/y"}).exit_status == 2);
}

TEST_CASE("mlens store without PATH uses OLLAMA_MODELS", "[ollama][cli]") {
    CliStore s;
    CliRun list, show;
    {
        ScopedEnv env("OLLAMA_MODELS", s.root());
        list = run_mlens({"store"});
        show = run_mlens({"store", "tiny:latest"});
    }
    INFO(list.out << list.err);
    CHECK(list.exit_status == 0);
    CHECK(contains(list.out, "tiny:latest"));
    CHECK(show.exit_status == 0);
    CHECK(contains(show.out, "registry.ollama.ai/library/tiny:latest"));
}

TEST_CASE("mlens store MODEL --tensors lists logical tensors and expert groups", "[ollama][cli]") {
    CliStore s;
    SafetensorsBuilder sb;
    sb.metadata("quant_type", "int4").metadata("group_size", "64");
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
        std::string t = std::string("model.layers.3.mlp.experts.") + p + ".weight";
        sb.tensor(t, "U32", "[128,12,32]", std::vector<uint8_t>(128 * 12 * 32 * 4));
        sb.tensor(t + ".scale", "BF16", "[128,12,4]", std::vector<uint8_t>(128 * 12 * 4 * 2));
        sb.tensor(t + ".bias", "BF16", "[128,12,4]", std::vector<uint8_t>(128 * 12 * 4 * 2));
    }
    LayerSpec experts = s.b.blob(kTensorMediaType, sb.bytes(), std::string("model.layers.3.mlp.experts"));
    s.b.add_model("moe", {experts}, "{\"model_format\":\"safetensors\",\"file_type\":\"int4\"}");
    CliRun run = run_mlens({"store", s.root(), "moe", "--tensors"});
    INFO(run.out << run.err);
    CHECK(run.exit_status == 0);
    CHECK(contains(run.out, "model.layers.3.mlp.experts.gate_proj.weight  int4 g64  [128, 12, 256]  U32 [128, 12, 32] + scale + bias"));
    CHECK(contains(run.out, "model.layers.3.mlp.experts  128"));
    CHECK(contains(run.out, "{gate_proj,up_proj,down_proj}"));
    CHECK(contains(run.out, "stacked, every projection in one group blob (current layout)"));

    CliRun json = run_mlens({"store", s.root(), "moe", "--tensors", "--json"});
    REQUIRE(json.exit_status == 0);
    auto j = nlohmann::json::parse(json.out);
    REQUIRE(j["groups"].size() == 1);
    CHECK(j["groups"][0]["count"] == 128);
    CHECK(j["tensors"][0]["quant"]["type"] == "int4");
    CHECK(j["tensors"][1]["part_of"] == 0);
}

TEST_CASE("mlens check DIR validates every manifest of a store", "[ollama][cli]") {
    CliStore s;
    CliRun ok = run_mlens({"check", s.root()});
    INFO(ok.out << ok.err);
    CHECK(ok.exit_status == 0);
    CHECK(contains(ok.out, "tiny:latest: ok"));
    CHECK(ok.err.empty());

    LayerSpec bad = s.b.tiny_model_layer();
    bad.digest = "sha256:../../../../etc/ld.so.preload";
    std::string text = manifest_json(s.b.tiny_config_layer(), {bad});
    s.b.write_manifest("registry.ollama.ai/library/evil/latest", text);
    CliRun rejected = run_mlens({"check", s.root()});
    INFO(rejected.out << rejected.err);
    CHECK(rejected.exit_status == 1);
    REQUIRE(rejected.err_lines().size() == 1);
    CHECK(rejected.err_lines()[0] == "error: store E_BAD_DIGEST manifests/registry.ollama.ai/library/evil/latest layers[0].digest offset=" +
                                         std::to_string(text.find("\"sha256:../")) +
                                         ": \"sha256:../../../../etc/ld.so.preload\" is not a digest of the form sha256:<64 lowercase hex digits>");
    CHECK(contains(rejected.out, "evil:latest: rejected (1 errors, 0 warnings)"));
    CHECK(contains(rejected.out, "tiny:latest: ok"));

    CliRun json = run_mlens({"check", s.root(), "--json"});
    CHECK(json.exit_status == 1);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["accepted"] == false);
    CHECK(j["errors"] == 1);
    REQUIRE(j["models"].size() == 2);
    CHECK(j["models"][0]["name"] == "evil:latest");
    CHECK(j["models"][0]["accepted"] == false);
    CHECK(j["models"][1]["accepted"] == true);
    CHECK(j["diagnostics"][0]["code"] == "E_BAD_DIGEST");
}
