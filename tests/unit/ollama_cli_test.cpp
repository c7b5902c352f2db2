// The store from the command line: `mlens store` listings and manifests (text and JSON), and
// `mlens check` on a store root with the exit status and diagnostic lines malformed-inputs.md A4
// prescribes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "build_paths.h"
#include "cli_runner.h"
#include "diagnostic_checks.h"
#include "mlens/model/summary.h"
#include "mlens/ollama/digest.h"
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

std::string last_line(const std::string& out) {
    std::string text = out.ends_with('\n') ? out.substr(0, out.size() - 1) : out;
    return text.substr(text.rfind('\n') + 1);
}

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

TEST_CASE("mlens store calls a blob unreferenced only when every manifest was read", "[ollama][cli]") {
    CliStore s;
    const LayerSpec stray = s.b.blob(kSystemMediaType, "named by no manifest");
    const std::string stray_name = "sha256-" + stray.digest.substr(7);
    const auto referenced_of = [](const nlohmann::json& j, const std::string& name) {
        for (const auto& b : j["blob_files"])
            if (b["name"] == name) return b["referenced"];
        return nlohmann::json("absent");
    };

    CliRun known = run_mlens({"store", s.root()});
    INFO(known.out << known.err);
    CHECK(contains(known.out, "blobs: 3 ("));
    CHECK(contains(known.out, "), 1 unreferenced, 0 partial"));
    auto j = nlohmann::json::parse(run_mlens({"store", s.root(), "--json"}).out);
    CHECK(j["references_known"] == true);
    CHECK(referenced_of(j, stray_name) == false);

    // A manifest that does not parse may name the stray blob: its state is unknown, not
    // "unreferenced"; the blobs a valid manifest names stay referenced.
    s.b.write_manifest("registry.ollama.ai/library/broken/latest", "{\"layers\": [");
    CliRun unknown = run_mlens({"store", s.root()});
    INFO(unknown.out << unknown.err);
    CHECK(contains(unknown.out, "blobs: 3 ("));
    CHECK(contains(unknown.out, "), unreferenced unknown (not every manifest was seen and read), 0 partial"));
    j = nlohmann::json::parse(run_mlens({"store", s.root(), "--json"}).out);
    CHECK(j["references_known"] == false);
    CHECK(referenced_of(j, stray_name).is_null());
    CHECK(referenced_of(j, "sha256-" + s.b.tiny_model_layer().digest.substr(7)) == true);
}

TEST_CASE("mlens store calls no blob unreferenced when the scan skipped an entry under manifests/", "[ollama][cli]") {
    CliStore s;
    const LayerSpec stray = s.b.blob(kSystemMediaType, "named by no manifest");
    const std::string manifests = s.root() + "/manifests", tiny = manifests + "/registry.ollama.ai/library/tiny/latest";
    const std::string skipped_tag = manifests + "/registry.ollama.ai/library/tiny/other";
    // Each entry may hold a manifest another program reads (Ollama follows symlinks): the blobs
    // no manifest seen names are of unknown state, not unreferenced.
    SECTION("a tag file that is a symlink") {
        std::filesystem::create_symlink(tiny, skipped_tag);
        REQUIRE(std::filesystem::is_symlink(skipped_tag));
    }
    SECTION("a tag file that is a FIFO") { REQUIRE(::mkfifo(skipped_tag.c_str(), 0600) == 0); }
    SECTION("a folder where a tag file belongs") { REQUIRE(std::filesystem::create_directory(skipped_tag)); }
    SECTION("manifests/ itself a symlink") {
        std::filesystem::rename(manifests, s.root() + "/real-manifests");
        std::filesystem::create_directory_symlink(s.root() + "/real-manifests", manifests);
        REQUIRE(std::filesystem::is_symlink(manifests));
    }
    CliRun run = run_mlens({"store", s.root()});
    INFO(run.out << run.err);
    CHECK(contains(run.out, "unreferenced unknown (not every manifest was seen and read)"));
    const auto j = nlohmann::json::parse(run_mlens({"store", s.root(), "--json"}).out);
    CHECK(j["references_known"] == false);
    for (const auto& b : j["blob_files"]) CHECK(b["referenced"] != false);
}

TEST_CASE("mlens store on a folder with neither manifests/ nor blobs/ says it is no store, never lists it empty", "[ollama][cli]") {
    TempDir dir;
    std::filesystem::create_directory(dir.file("downloads"));
    CliRun run = run_mlens({"store", dir.file("downloads")});
    CHECK(run.exit_status == 1);
    CHECK(run.out.empty());
    CHECK(contains(run.err, dir.file("downloads") + " is not an Ollama store (it has neither a manifests/ nor a blobs/ folder)"));
    // A store whose models were all removed still has its blobs/ folder: listed, empty.
    std::filesystem::create_directory(dir.file("downloads/blobs"));
    CHECK(run_mlens({"store", dir.file("downloads")}).exit_status == 0);
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
    CHECK(contains(run.out, model.digest.substr(0, 19) + "\xE2\x80\xA6"));
    CHECK_FALSE(contains(run.out, model.digest.substr(7)));
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
    CHECK(j["layers"][0]["digest"] == model.digest);
    CHECK(j["layers"][0]["blob"] == "blobs/sha256-" + model.digest.substr(7));
    CHECK(j["layers"][1]["kind"] == "system");
    CHECK(display_safe(j["layers"][1]["text"].get<std::string>()));
    CHECK(j["config_layer"]["verified"] == "ok");
}

TEST_CASE("mlens show leads with a summary and prints text layers as readable text", "[ollama][cli]") {
    CliStore s;
    std::string license;
    for (int i = 1; i <= 20; ++i) license += "License line " + std::to_string(i) + "\n";
    LayerSpec model = s.b.tiny_model_layer();
    LayerSpec tmpl = s.b.blob(kTemplateMediaType, "{{ if .Tools }}[TOOLS]{{ .Tools }}{{ end }}\n[INST] {{ .Prompt }} [/INST]");
    LayerSpec params = s.b.blob(kParamsMediaType, R"({"stop":["\u003cstart_of_turn\u003e"],"temperature":0.1})");
    LayerSpec lic = s.b.blob(kLicenseMediaType, license);
    s.b.add_model("chat", {model, tmpl, params, lic}, config_json("gguf", "llama", "F32"));

    CliRun run = run_mlens({"show", "chat", "--store", s.root()});
    INFO(run.out << run.err);
    REQUIRE(run.exit_status == 0);
    std::vector<std::string> lines;
    for (size_t at = 0; at < run.out.size();) {
        size_t end = run.out.find('\n', at);
        lines.push_back(run.out.substr(at, end - at));
        at = end + 1;
    }
    // The summary comes first, one fact a line.
    REQUIRE(lines.size() > 12);
    CHECK(lines[0] == "model           chat:latest  (registry.ollama.ai/library/chat:latest)");
    CHECK(lines[1] == "format          gguf");
    CHECK(lines[2] == "family          llama");
    CHECK(lines[3] == "parameters      32");
    CHECK(lines[4] == "quantization    F32");
    CHECK(lines[5] == "context length  -");
    CHECK(lines[6] == "capabilities    completion, tools");
    CHECK(lines[8] == "template        {{ if .Tools }}[TOOLS]{{ .Tools }}{{ end }} \xE2\x80\xA6");
    CHECK(lines[9] == "license         License line 1 \xE2\x80\xA6");
    // Params as indented JSON with its escapes resolved; the license's head and what is left.
    CHECK(contains(run.out,
                   "\nparams (" + std::to_string(params.size) +
                       " bytes)\n  {\n    \"stop\": [\n      \"<start_of_turn>\"\n    ],\n    \"temperature\": 0.1\n  }\n"));
    CHECK(contains(run.out,
                   "\ntemplate (" + std::to_string(tmpl.size) +
                       " bytes)\n  {{ if .Tools }}[TOOLS]{{ .Tools }}{{ end }}\n  [INST] {{ .Prompt }} [/INST]\n"));
    CHECK(contains(run.out, "  License line 8\n  \xE2\x80\xA6 12 more lines (--json holds the text)\n"));
    CHECK_FALSE(contains(run.out, "License line 9"));
    CHECK_FALSE(contains(run.out, "\\x0A"));
    // Digests once, cut to 12 digits: no line is wider than a terminal's worth.
    for (const std::string& line : lines) CHECK(line.size() < 100);

    auto j = nlohmann::json::parse(run_mlens({"show", "chat", "--store", s.root(), "--json"}).out);
    CHECK(j["summary"]["format"] == "gguf");
    CHECK(j["summary"]["parameters"] == 32);
    CHECK(j["summary"]["parameter_size"] == "1.02K");
    CHECK(j["summary"]["capabilities"] == nlohmann::json({"completion", "tools"}));
    CHECK(j["summary"]["context_length"].is_null());
    CHECK(j["layers"][3]["text"] == license);

    // What the config says is escaped in the summary too.
    s.b.add_model("odd", {model}, R"({"model_format":"\u001b[31mgguf","model_family":"\u202ellama"})");
    CliRun odd = run_mlens({"show", "odd", "--store", s.root()});
    INFO(odd.out);
    CHECK(contains(odd.out, "\nformat          \\x1B[31mgguf\n"));
    CHECK(contains(odd.out, "\nfamily          \\u202Ellama\n"));
    CHECK(display_safe(odd.out));
}

TEST_CASE("mlens show groups the layers by media type in the order the manifest first names each", "[ollama][cli]") {
    CliStore s;
    LayerSpec model = s.b.tiny_model_layer();
    LayerSpec first = s.b.blob(kLicenseMediaType, "MIT\n");
    LayerSpec tmpl = s.b.blob(kTemplateMediaType, "{{ .Prompt }}");
    LayerSpec second = s.b.blob(kLicenseMediaType, "Apache-2.0\n");
    s.b.add_model("chat", {model, first, tmpl, second}, config_json("gguf", "llama", "F32"));

    CliRun run = run_mlens({"show", "chat", "--store", s.root()});
    INFO(run.out << run.err);
    REQUIRE(run.exit_status == 0);
    const std::string licenses =
        "\nlicense \xC2\xB7 2 layers \xC2\xB7 " + human_bytes(first.size + second.size) + "  " + std::string(kLicenseMediaType) + "\n";
    const std::string templates =
        "\ntemplate \xC2\xB7 1 layer \xC2\xB7 " + human_bytes(tmpl.size) + "  " + std::string(kTemplateMediaType) + "\n";
    const size_t layers_at = run.out.find("\nlayers (5, by media type)\n");
    const size_t config_at = run.out.find("\nconfig \xC2\xB7 1 layer");
    const size_t model_at =
        run.out.find("\nmodel \xC2\xB7 1 layer \xC2\xB7 " + human_bytes(model.size) + "  " + std::string(kModelMediaType) + "\n");
    const size_t licenses_at = run.out.find(licenses);
    const size_t templates_at = run.out.find(templates);
    REQUIRE(layers_at != std::string::npos);
    REQUIRE(config_at != std::string::npos);
    REQUIRE(model_at != std::string::npos);
    REQUIRE(licenses_at != std::string::npos);
    REQUIRE(templates_at != std::string::npos);
    CHECK(layers_at < config_at);
    CHECK(config_at < model_at);
    CHECK(model_at < licenses_at);
    CHECK(licenses_at < templates_at);
    // Both licenses sit under their group's header, before the template's group.
    const std::string license_rows = run.out.substr(licenses_at + licenses.size(), templates_at - licenses_at - licenses.size());
    CHECK(contains(license_rows, short_digest(first.digest)));
    CHECK(contains(license_rows, short_digest(second.digest)));
    CHECK_FALSE(contains(license_rows, short_digest(tmpl.digest)));
    // The media type is written once per group, not on every row.
    CHECK(run.out.find(std::string(kLicenseMediaType)) == run.out.rfind(std::string(kLicenseMediaType)));

    // --json keeps one entry per layer in manifest order.
    auto j = nlohmann::json::parse(run_mlens({"show", "chat", "--store", s.root(), "--json"}).out);
    REQUIRE(j["layers"].size() == 4);
    CHECK(j["layers"][0]["kind"] == "model");
    CHECK(j["layers"][1]["kind"] == "license");
    CHECK(j["layers"][2]["kind"] == "template");
    CHECK(j["layers"][3]["kind"] == "license");
}

TEST_CASE("mlens show and mlens verify name one store model", "[ollama][cli]") {
    CliStore s;
    LayerSpec model = s.b.tiny_model_layer();
    s.b.write_manifest("registry.ollama.ai/library/chat/latest", manifest_json(s.b.tiny_config_layer(), {model}));

    CliRun show = run_mlens({"show", "chat", "--store", s.root()});
    INFO(show.out << show.err);
    CHECK(show.exit_status == 0);
    CHECK(contains(show.out, "registry.ollama.ai/library/chat:latest"));
    CHECK(contains(show.out, model.digest.substr(0, 19) + "\xE2\x80\xA6"));
    CHECK_FALSE(contains(show.out, "VERIFY"));
    CHECK(last_line(show.out) == "verdict: ok, digests not verified (mlens verify hashes them)");

    const uint64_t hashed = model.size + s.b.tiny_config_layer().size;
    CliRun ok_text = run_mlens({"verify", "chat:latest", "--store", s.root()});
    CHECK(ok_text.exit_status == 0);
    CHECK(last_line(ok_text.out) == "verdict: ok, 2 blobs match their digests (" + human_bytes(hashed) + " hashed)");
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
    CHECK(last_line(bad.out).starts_with("verdict: rejected, 1 of 2 blobs do not match their digests: E_DIGEST_MISMATCH "));
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
    CHECK(contains(run.out, "model.layers.3.mlp.experts.gate_proj.weight  int4 g64  [128, 12, 256]  "));
    CHECK(contains(run.out, "  U32 [128, 12, 32] + scale + bias"));
    CHECK(contains(run.out, "model.layers.3.mlp.experts      128"));  // counts right-aligned under EXPERTS
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
    CHECK(rejected.err_lines()[0] ==
          "error: store E_BAD_DIGEST manifests/registry.ollama.ai/library/evil/latest layers[0].digest offset=" +
              std::to_string(text.find("\"sha256:../")) +
              ": \"sha256:../../../../etc/ld.so.preload\" is not a digest of the form sha256:<64 lowercase hex digits>");
    CHECK(contains(rejected.out, "evil:latest: rejected (1 error, 0 warnings)"));
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

TEST_CASE("a store model named without a tag it has lists the tags it has", "[ollama][cli]") {
    const std::string store = std::string(MLENS_DEMO_DIR) + "/ollama-store";
    for (const char* command : {"show", "info"}) {
        INFO(command);
        CliRun r = run_mlens({command, store + "/tiny-llama"});
        CHECK(r.exit_status == 1);
        CHECK(r.err == "error: " + store + "/tiny-llama: E_NOT_FOUND: " + store +
                  " has tiny-llama but not tiny-llama:latest; its tags: q4_0\n");
    }
    // A tag the model has is found as before; a model the store lacks altogether is not listed.
    CHECK(run_mlens({"show", store + "/tiny-llama:q4_0"}).exit_status == 0);
    CliRun none = run_mlens({"info", store + "/no-such-model"});
    CHECK(none.exit_status == 1);
    CHECK(none.err.find("its tags") == std::string::npos);
}

TEST_CASE("mlens store on a path that names nothing says so, not that no store was found", "[ollama][cli]") {
    TempDir dir;
    CliRun run = run_mlens({"store", dir.file("absent")});
    CHECK(run.exit_status == 1);
    CHECK(contains(run.err, dir.file("absent") + ": no such file or folder"));
    CHECK_FALSE(contains(run.err, "no Ollama store found"));
}
