// `mlens export` of GGUF-backed store models: the planned files and their exact sizes, the compat
// export of an Ollama-made blob (same bytes as export_upstream, same greedy tokens in llama.cpp as
// the store model), blob copies, the Modelfile and its round trip to the same layers, and the
// output folder rules (nothing partial under the final name).
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_runner.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/model_loader.h"
#include "mlens/ollama/modelfile.h"
#include "mlens/ollama/store_export.h"
#include "mlens/ollama/text_blob.h"
#include "ollama_store_builder.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
using namespace mlens::test;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kAdapterMediaType = "application/vnd.ollama.image.adapter";
constexpr std::string_view kProjectorMediaType = "application/vnd.ollama.image.projector";
constexpr std::string_view kDraftMediaType = "application/vnd.ollama.image.draft";

const std::string kTemplate = "{{ if .System }}<start_of_turn>system\n{{ .System }}<end_of_turn>\n{{ end }}{{ .Prompt }}";
const std::string kSystem = "You answer in one word.";
const std::string kParams = R"({"temperature":0.7,"stop":["<end_of_turn>","<eos>"],"num_ctx":64})";
const std::string kMessages = R"([{"role":"user","content":"hi"},{"role":"assistant","content":"say \"hello\""}])";
const std::string kLicense = "Gemma Terms of Use\nline two";

struct GgufStore {
    TempDir dir;
    std::string root;
    std::vector<uint8_t> model_blob, extra_blob;
};

// Creates the empty store folder and writes the tiny gemma3 in `layout` (the model blob) as
// `model_file` and the upstream tiny lfm2 (the extra layer's blob) as `extra_file`.
void write_blobs(GgufStore& s, TinyLayout layout, const std::string& model_file, const std::string& extra_file) {
    s.root = s.dir.file("store");
    fs::create_directories(s.root);
    write_tiny_model(tiny_gemma3(layout), s.dir.file(model_file));
    write_tiny_model(tiny_lfm2(TinyLayout::upstream), s.dir.file(extra_file));
    s.model_blob = read_whole_file(s.dir.file(model_file));
    s.extra_blob = read_whole_file(s.dir.file(extra_file));
}

// A store with the Ollama-made tiny gemma3 as model blob (its vision part in the same blob), every
// text layer, and an adapter layer.
void make_ollama_gemma_store(GgufStore& s) {
    write_blobs(s, TinyLayout::ollama, "ollama.gguf", "adapter.gguf");
    OllamaStoreBuilder b(s.root);
    std::vector<LayerSpec> layers = {b.blob(kModelMediaType, s.model_blob),  b.blob(kTemplateMediaType, kTemplate),
                                     b.blob(kSystemMediaType, kSystem),      b.blob(kParamsMediaType, kParams),
                                     b.blob(kMessagesMediaType, kMessages),  b.blob(kLicenseMediaType, kLicense),
                                     b.blob(kAdapterMediaType, s.extra_blob)};
    b.add_model("gemma-ollama", layers, config_json("gguf", "gemma3", "F32"));
}

PreparedExport prepare(const std::string& root, const std::string& reference, StoreExportOptions options = {}) {
    auto store = Store::open(root);
    REQUIRE(store);
    auto name = parse_model_reference(reference);
    REQUIRE(name);
    auto prepared = prepare_store_export(*store, *name, options);
    INFO((prepared ? std::string() : prepared.error().to_string()));
    REQUIRE(prepared);
    return std::move(*prepared);
}

std::vector<std::string> file_names(const StoreExportPlan& plan) {
    std::vector<std::string> names;
    for (const ExportFile& f : plan.files) names.push_back(f.name);
    return names;
}

std::string read_text(const std::string& path) {
    auto bytes = read_whole_file(path);
    return std::string(bytes.begin(), bytes.end());
}

std::vector<int32_t> greedy_tokens(const std::string& path, bool as_is) {
    SessionOptions options;
    options.n_ctx = 64;
    options.as_is = as_is;
    auto loaded = load_model_session(path, options);
    INFO((loaded ? std::string() : loaded.error().to_string()));
    REQUIRE(loaded);
    GenerateOptions gen;
    gen.max_tokens = 4;
    gen.stop_at_eog = false;
    auto result = generate_from_tokens(*loaded->session, {2, 10, 20}, gen);
    REQUIRE(result);
    std::vector<int32_t> ids;
    for (const GenerationStep& step : result->steps) ids.push_back(step.token);
    return ids;
}

}  // namespace

TEST_CASE("store export of an Ollama-made GGUF: the compat export, mmproj, adapter, Modelfile and README", "[store_export]") {
    GgufStore s;
    make_ollama_gemma_store(s);
    PreparedExport p = prepare(s.root, "gemma-ollama");
    const StoreExportPlan& plan = p.plan;
    CHECK(plan.format == ExportFormat::gguf);
    CHECK(plan.formats == std::vector<ExportFormat>{ExportFormat::gguf});
    CHECK(plan.ollama_made);
    CHECK(file_names(plan) == std::vector<std::string>{"model.gguf", "mmproj.gguf", "adapter-1.gguf", "Modelfile", "README.md"});
    CHECK(plan.files[0].kind == ExportFileKind::upstream_text);
    CHECK(plan.files[1].kind == ExportFileKind::upstream_mmproj);
    CHECK(plan.files[2].kind == ExportFileKind::blob_copy);
    CHECK(plan.files[2].bytes == s.extra_blob.size());

    const std::string expected_modelfile =
        "FROM ./model.gguf\n"
        "ADAPTER ./adapter-1.gguf\n"
        "TEMPLATE \"\"\"" +
        kTemplate +
        "\"\"\"\n"
        "SYSTEM \"\"\"You answer in one word.\"\"\"\n"
        "PARAMETER num_ctx 64\n"
        "PARAMETER stop \"<end_of_turn>\"\n"
        "PARAMETER stop \"<eos>\"\n"
        "PARAMETER temperature 0.7\n"
        "MESSAGE user \"\"\"hi\"\"\"\n"
        "MESSAGE assistant \"\"\"say \"hello\"\"\"\"\n"
        "LICENSE \"\"\"Gemma Terms of Use\nline two\"\"\"\n";
    CHECK(plan.files[3].text == expected_modelfile);

    const std::string out = s.dir.file("out");
    auto report = write_store_export(p, out);
    INFO((report ? std::string() : report.error().to_string()));
    REQUIRE(report);
    CHECK(report->files_verified == 5);
    // Every file has exactly the size the plan announced, and nothing else is in the folder.
    size_t entries = 0;
    for (const auto& e : fs::directory_iterator(out)) {
        ++entries;
        (void)e;
    }
    CHECK(entries == plan.files.size());
    for (const ExportFile& f : plan.files) CHECK(fs::file_size(out + "/" + f.name) == f.bytes);

    // model.gguf and mmproj.gguf are byte for byte what export-upstream writes of the blob.
    auto blob_model = open_gguf(s.dir.file("ollama.gguf"));
    REQUIRE(blob_model);
    auto compat_plan = compat::plan_compat(*blob_model);
    REQUIRE(compat::export_upstream(*blob_model, compat_plan, {s.dir.file("direct.gguf"), s.dir.file("direct-mmproj.gguf"), {}}));
    CHECK(read_whole_file(out + "/model.gguf") == read_whole_file(s.dir.file("direct.gguf")));
    CHECK(read_whole_file(out + "/mmproj.gguf") == read_whole_file(s.dir.file("direct-mmproj.gguf")));
    CHECK(read_whole_file(out + "/adapter-1.gguf") == s.extra_blob);

    // The Modelfile rebuilds the same layers: text layers byte for byte, params and messages as JSON.
    auto instructions = parse_modelfile(read_text(out + "/Modelfile"));
    REQUIRE(instructions);
    CHECK((*instructions)[0].keyword == "FROM");
    CHECK((*instructions)[0].value == "./model.gguf");
    CHECK((*instructions)[1].keyword == "ADAPTER");
    std::vector<ModelfileTextLayer> rebuilt = modelfile_layers(*instructions);
    std::vector<ModelfileTextLayer> stored;
    for (const LayerView& l : p.view.layers)
        if (layer_is_text(l.layer.kind)) stored.push_back({l.layer.kind, l.text->text});
    REQUIRE(rebuilt.size() == stored.size());
    for (size_t i = 0; i < stored.size(); ++i) {
        CHECK(rebuilt[i].kind == stored[i].kind);
        CHECK(same_layer_content(stored[i].kind, rebuilt[i].text, stored[i].text));
    }
    CHECK(rebuilt[0].text == kTemplate);
    CHECK(rebuilt[1].text == kSystem);
    CHECK(rebuilt[4].text == kLicense);
    CHECK(rebuilt[2].text == R"({"num_ctx":64,"stop":["<end_of_turn>","<eos>"],"temperature":0.7})");

    const std::string readme = read_text(out + "/README.md");
    CHECK(readme.find("llama-cli -m model.gguf --mmproj mmproj.gguf --lora adapter-1.gguf") != std::string::npos);
    CHECK(readme.find(p.view.stored.digest) != std::string::npos);
    CHECK(readme.find("text side rewritten: ") != std::string::npos);
}

TEST_CASE("store export: the GGUF bundle gives the same greedy tokens as the store model through the compat path",
          "[store_export][infer]") {
    GgufStore s;
    make_ollama_gemma_store(s);
    PreparedExport p = prepare(s.root, "gemma-ollama");
    REQUIRE(write_store_export(p, s.dir.file("out")));
    std::vector<int32_t> bundle = greedy_tokens(s.dir.file("out/model.gguf"), true);
    std::vector<int32_t> store = greedy_tokens(s.root + "/gemma-ollama:latest", false);
    CHECK(bundle.size() == 4);
    CHECK(bundle == store);
}

TEST_CASE("store export of an upstream GGUF with a projector or a draft layer copies the blobs as they are", "[store_export]") {
    GgufStore s;
    write_blobs(s, TinyLayout::upstream, "upstream.gguf", "projector.gguf");
    {
        OllamaStoreBuilder b(s.root);
        b.add_model("plain", {b.blob(kModelMediaType, s.model_blob), b.blob(kProjectorMediaType, s.extra_blob)},
                    config_json("gguf", "gemma3", "F32"), "v1");
        b.add_model("drafted", {b.blob(kModelMediaType, s.model_blob), b.blob(kDraftMediaType, s.extra_blob)},
                    config_json("gguf", "gemma3", "F32"));
    }
    PreparedExport drafted = prepare(s.root, "drafted");
    CHECK(file_names(drafted.plan) == std::vector<std::string>{"model.gguf", "draft.gguf", "Modelfile", "README.md"});
    REQUIRE(write_store_export(drafted, s.dir.file("drafted")));
    CHECK(read_whole_file(s.dir.file("drafted/draft.gguf")) == s.extra_blob);
    CHECK(read_text(s.dir.file("drafted/README.md")).find("llama-cli -m model.gguf -md draft.gguf") != std::string::npos);

    PreparedExport p = prepare(s.root, "plain:v1");
    CHECK_FALSE(p.plan.ollama_made);
    CHECK(file_names(p.plan) == std::vector<std::string>{"model.gguf", "mmproj.gguf", "Modelfile", "README.md"});
    CHECK(p.plan.files[0].kind == ExportFileKind::blob_copy);
    CHECK(p.plan.files[0].bytes == s.model_blob.size());
    CHECK(p.plan.files[2].text == "FROM ./model.gguf\n");
    REQUIRE(write_store_export(p, s.dir.file("out")));
    CHECK(read_whole_file(s.dir.file("out/model.gguf")) == s.model_blob);
    CHECK(read_whole_file(s.dir.file("out/mmproj.gguf")) == s.extra_blob);
    CHECK(read_text(s.dir.file("out/README.md")).find("the model blob as is (no evidence that Ollama made it)") != std::string::npos);
}

TEST_CASE("store export refuses a used or in-store OUT_DIR and leaves nothing when cancelled", "[store_export]") {
    GgufStore s;
    make_ollama_gemma_store(s);
    PreparedExport p = prepare(s.root, "gemma-ollama");

    fs::create_directories(s.dir.file("full"));
    write_file(s.dir.file("full/keep.txt"), "mine");
    auto used = write_store_export(p, s.dir.file("full"));
    REQUIRE_FALSE(used);
    CHECK(used.error().code == ErrorCode::E_OUTPUT_EXISTS);
    CHECK(read_text(s.dir.file("full/keep.txt")) == "mine");

    auto in_store = write_store_export(p, s.root + "/blobs/export");
    REQUIRE_FALSE(in_store);
    CHECK(in_store.error().code == ErrorCode::E_OUTPUT_IN_STORE);
    CHECK_FALSE(fs::exists(s.root + "/blobs/export"));
    // "link/.." is the parent of the link's target on disk, not the folder the link sits in: a
    // link to the store's blobs makes link/../x a folder in the store root, refused as such.
    fs::create_directories(s.dir.file("work"));
    fs::create_directory_symlink(s.root + "/blobs", s.dir.file("work/sl"));
    for (const std::string& through_link : {s.dir.file("work/sl/../export"), s.dir.file("work/sl/../manifests/export")}) {
        INFO(through_link);
        auto linked = write_store_export(p, through_link);
        REQUIRE_FALSE(linked);
        CHECK(linked.error().code == ErrorCode::E_OUTPUT_IN_STORE);
    }
    CHECK_FALSE(fs::exists(s.root + "/export"));
    CHECK_FALSE(fs::exists(s.root + "/manifests/export"));
    CHECK(leftovers_in(s.root) == 0);
    // The same text, with the link to a folder outside the store, writes where the kernel goes.
    fs::create_directories(s.dir.file("elsewhere/in"));
    fs::create_directory_symlink(s.dir.file("elsewhere/in"), s.dir.file("work/out_link"));
    REQUIRE(write_store_export(p, s.dir.file("work/out_link/../placed")));
    CHECK(fs::exists(s.dir.file("elsewhere/placed/model.gguf")));
    CHECK_FALSE(fs::exists(s.dir.file("work/placed")));

    // An empty folder is taken and filled.
    fs::create_directories(s.dir.file("empty"));
    CHECK(write_store_export(p, s.dir.file("empty")));
    CHECK(fs::exists(s.dir.file("empty/model.gguf")));

    // Cancelled: no OUT_DIR and no scratch folder beside it.
    const std::string parent = s.dir.file("cancel");
    fs::create_directories(parent);
    JobContext job;
    job.cancel();
    auto cancelled = write_store_export(p, parent + "/out", &job);
    REQUIRE_FALSE(cancelled);
    CHECK(cancelled.error().code == ErrorCode::E_CANCELLED);
    CHECK(fs::is_empty(parent));
}

TEST_CASE("Modelfile: quoting, comments and what cannot be quoted", "[store_export]") {
    ModelfileInput input;
    input.from = "./model.gguf";
    input.layers = {{LayerKind::system, "ends with a quote\""},
                    {LayerKind::template_text, "has \"\"\" inside"},
                    {LayerKind::params, R"({"stop":"single","seed":42,"penalize_newline":true})"}};
    auto written = write_modelfile(input);
    REQUIRE(written);
    const std::string& text = *written;
    CHECK(text ==
          "FROM ./model.gguf\n"
          "SYSTEM \"\"\"ends with a quote\"\"\"\"\n"
          "TEMPLATE \"\"\"has \"\"\" inside\"\"\"\n"
          "PARAMETER penalize_newline true\n"
          "PARAMETER seed 42\n"
          "PARAMETER stop \"single\"\n");
    input.layers = {{LayerKind::template_text, "ends a line with \"\"\"\nthen more"}};
    auto refused = write_modelfile(input);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::E_MODELFILE);
    CHECK(refused.error().message.find("TEMPLATE has a line ending in three quotes") != std::string::npos);

    auto parsed = parse_modelfile("# a comment\nfrom ./x.gguf\n" + text.substr(text.find("SYSTEM")));
    REQUIRE(parsed);
    REQUIRE(parsed->size() == 6);
    CHECK((*parsed)[0].keyword == "FROM");
    CHECK((*parsed)[0].value == "./x.gguf");
    CHECK((*parsed)[1].value == "ends with a quote\"");
    auto layers = modelfile_layers(*parsed);
    REQUIRE(layers.size() == 3);
    CHECK(layers[1].text == "has \"\"\" inside");
    CHECK(layers[2].text == R"({"penalize_newline":true,"seed":42,"stop":["single"]})");
    // Ollama keeps stop as a list even when given once; the stored layer said "single".
    CHECK_FALSE(same_layer_content(LayerKind::params, layers[2].text, R"({"stop":"single","seed":42,"penalize_newline":true})"));

    auto bad = parse_modelfile("FROM ./a.gguf\nEXPLODE now\n");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::E_MODELFILE);
    CHECK(bad.error().field == "line 2");
}

TEST_CASE("mlens export --dry-run lists the files of a GGUF bundle with their sizes", "[store_export]") {
    GgufStore s;
    make_ollama_gemma_store(s);
    PreparedExport p = prepare(s.root, "gemma-ollama");
    CliRun run = run_mlens({"export", s.root + "/gemma-ollama", "--dry-run"});
    INFO(run.err << run.out);
    CHECK(run.exit_status == 0);
    CHECK(run.out.starts_with("model: gemma-ollama:latest  format: gguf\nwould write:\n"));
    // BYTES is right-aligned to the widest size (the adapter's 8 digits).
    const std::string bytes = std::to_string(p.plan.files[0].bytes);
    CHECK(run.out.find("model.gguf      " + std::string(8 - bytes.size(), ' ') + bytes + "  the upstream-shaped GGUF") != std::string::npos);
    CHECK(run.out.find("total           " + std::to_string(p.plan.total_bytes())) != std::string::npos);
    CHECK_FALSE(fs::exists(s.dir.file("out")));

    CliRun wrote = run_mlens({"export", "gemma-ollama", s.dir.file("out"), "--store", s.root});
    CHECK(wrote.exit_status == 0);
    CHECK(wrote.out.find("verified: 5 files\n") != std::string::npos);
    CHECK(fs::file_size(s.dir.file("out/model.gguf")) == p.plan.files[0].bytes);

    CliRun again = run_mlens({"export", "gemma-ollama", s.dir.file("out"), "--store", s.root});
    // The folder on disk refuses it, as the store refuses a folder inside it: exit 1, like
    // E_OUTPUT_IN_STORE (cli_error.h).
    CHECK(again.exit_status == 1);
    CHECK(again.err.find("E_OUTPUT_EXISTS") != std::string::npos);
    // "." and ".." can never be renamed onto: refused before any byte is written, though the
    // folder they name is empty.
    fs::create_directories(s.dir.file("empty/sub"));
    for (const std::string& dot : {s.dir.file("empty/sub/."), s.dir.file("empty/sub/.."), s.dir.file("empty/sub/./")}) {
        INFO(dot);
        fs::remove_all(s.dir.file("empty/sub"));
        fs::create_directories(s.dir.file("empty/sub"));
        CliRun here = run_mlens({"export", "gemma-ollama", dot, "--store", s.root});
        CHECK(here.exit_status == 2);
        CHECK(here.err.find("E_ARGS") != std::string::npos);
        CHECK(here.err.find("names no new folder") != std::string::npos);
        CHECK(leftovers_in(s.dir.file("empty")) == 0);
        CHECK(fs::is_empty(s.dir.file("empty/sub")));
    }
    CliRun wrong = run_mlens({"export", "gemma-ollama", s.dir.file("out2"), "--store", s.root, "--format", "hf"});
    CHECK(wrong.exit_status == 2);
    CHECK(wrong.err.find("format hf does not apply to this model") != std::string::npos);
}

TEST_CASE("export format names read back to their format - an unknown name is no format", "[store_export]") {
    CHECK(parse_export_format("gguf") == ExportFormat::gguf);
    CHECK(parse_export_format("hf") == ExportFormat::hf);
    CHECK(parse_export_format("mlx") == ExportFormat::mlx);
    CHECK(std::string(export_format_name(ExportFormat::hf)) == "hf");
    CHECK_FALSE(parse_export_format("safetensors"));
    CHECK_FALSE(parse_export_format("GGUF"));
}
