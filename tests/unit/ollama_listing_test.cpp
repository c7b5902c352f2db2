// Store discovery, the model list, one manifest's view, and blob hashing on demand
// (ollama-store.md §3).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "gguf_builder.h"
#include "mlens/ollama/blob_hash.h"
#include "mlens/ollama/config_fields.h"
#include "mlens/ollama/manifest_view.h"
#include "mlens/ollama/store_check.h"
#include "mlens/ollama/store_listing.h"
#include "ollama_store_builder.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const ModelListing* listed(const StoreListing& l, const std::string& display) {
    for (const ModelListing& m : l.models)
        if (m.ref.name.display() == display) return &m;
    return nullptr;
}

int64_t mtime_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mtime;
}

}  // namespace

TEST_CASE("store locations follow Ollama's order", "[ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    SECTION("OLLAMA_MODELS, when set, is the only one") {
        ScopedEnv env("OLLAMA_MODELS", dir.path());
        auto locations = default_store_locations();
        REQUIRE(locations.size() == 1);
        CHECK(locations[0].path == dir.path());
        CHECK(locations[0].origin == "OLLAMA_MODELS");
        auto found = find_stores();
        REQUIRE(found.size() == 1);
        CHECK(found[0].path == dir.path());
    }
    SECTION("otherwise the home store, then the Linux service's") {
        ScopedEnv env("OLLAMA_MODELS", std::string());
        ScopedEnv home("HOME", dir.path());
        auto locations = default_store_locations();
        REQUIRE(locations.size() == 2);
        CHECK(locations[0].path == dir.path() + "/.ollama/models");
        CHECK(locations[0].origin == "home");
        CHECK(locations[1].path == "/usr/share/ollama/.ollama/models");
        CHECK(locations[1].origin == "system");
        std::filesystem::create_directories(dir.path() + "/.ollama/models/manifests");
        auto found = find_stores();
        REQUIRE(!found.empty());
        CHECK(found[0].path == dir.path() + "/.ollama/models");
    }
}

TEST_CASE("the model list: names, sizes, format, family, quantization, times, problems", "[ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    std::vector<uint8_t> norm(8, 0);
    LayerSpec tensor = b.blob(kTensorMediaType, SafetensorsBuilder().tensor("model.norm.weight", "F32", "[2]", norm).bytes(),
                              std::string("model.norm.weight"));
    LayerSpec st_config = b.blob(kImageConfigMediaType,
                                 "{\"model_format\":\"safetensors\",\"model_family\":\"qwen3\","
                                 "\"model_type\":\"30.5B\",\"file_type\":\"int4\"}");
    b.write_manifest("registry.ollama.ai/someone/st/int4", manifest_json(st_config, {tensor}));
    b.write_manifest("hf.co/org/repo/Q4_K_M", manifest_json(b.tiny_config_layer(), {b.tiny_model_layer()}));
    LayerSpec bad = b.tiny_model_layer();
    bad.digest = "sha256:nothex";
    b.write_manifest("registry.ollama.ai/library/evil/latest", manifest_json(b.tiny_config_layer(), {bad}));
    LayerSpec no_config = b.tiny_config_layer();
    no_config.digest = "sha256:" + std::string(64, '0');
    b.write_manifest("registry.ollama.ai/library/noconfig/latest", manifest_json(no_config, {b.tiny_model_layer()}));
    write_file(b.root() + "/blobs/sha256-" + std::string(64, 'a') + "-partial", "x");

    auto store = Store::open(b.root());
    REQUIRE(store);
    StoreListing l = list_store(*store).value;
    CHECK(l.root == store->root());
    CHECK(l.diagnostics.empty());
    REQUIRE(l.models.size() == 5);
    std::vector<std::string> order;
    for (const ModelListing& m : l.models) order.push_back(m.ref.name.display());
    CHECK(order == std::vector<std::string>{"hf.co/org/repo:Q4_K_M", "evil:latest", "noconfig:latest", "tiny:latest", "someone/st:int4"});

    const ModelListing* tiny = listed(l, "tiny:latest");
    REQUIRE(tiny);
    CHECK(tiny->ok());
    CHECK(tiny->size == b.tiny_config_layer().size + 256);
    CHECK(tiny->format == "gguf");
    CHECK(tiny->family == "llama");
    CHECK(tiny->parameter_size == "1.02K");
    CHECK(tiny->quantization == "F32");
    CHECK(tiny->ref.path == "manifests/registry.ollama.ai/library/tiny/latest");
    CHECK(tiny->ref.modified == mtime_of(b.root() + "/manifests/registry.ollama.ai/library/tiny/latest"));

    const ModelListing* st = listed(l, "someone/st:int4");
    REQUIRE(st);
    CHECK(st->ok());
    CHECK(st->format == "safetensors");
    CHECK(st->family == "qwen3");
    CHECK(st->quantization == "int4");
    CHECK(st->parameter_size == "30.5B");

    const ModelListing* evil = listed(l, "evil:latest");
    REQUIRE(evil);
    CHECK(!evil->ok());
    REQUIRE(!evil->check.reasons.empty());
    CHECK(evil->check.reasons[0].code == ErrorCode::E_BAD_DIGEST);
    CHECK(evil->check.reasons[0].field == "manifests/registry.ollama.ai/library/evil/latest layers[0].digest");
    CHECK(evil->format == "gguf");  // the config still tells

    const ModelListing* noconfig = listed(l, "noconfig:latest");
    REQUIRE(noconfig);
    CHECK(!noconfig->ok());
    CHECK(noconfig->check.reasons[0].code == ErrorCode::E_BLOB_MISSING);
    CHECK(noconfig->check.reasons[0].field == "manifests/registry.ollama.ai/library/noconfig/latest config");
    CHECK(noconfig->format == "gguf");  // told by the model layer

    size_t blobs = 0, partial = 0, unreferenced = 0;
    for (const ListedBlobFile& f : l.blob_files) {
        blobs += f.file.kind.kind == BlobFileKind::blob;
        partial += f.file.kind.kind == BlobFileKind::partial;
        unreferenced += f.file.kind.kind == BlobFileKind::blob && !f.referenced;
    }
    CHECK(blobs == 4);
    CHECK(partial == 1);
    CHECK(unreferenced == 0);
    // The evil manifest has an error: a blob it might have named is not called unreferenced.
    CHECK_FALSE(l.references_known);
    const BlobFilesSummary summary = l.blob_summary();
    CHECK(summary.blobs == blobs);
    CHECK(summary.partial == partial);
    CHECK_FALSE(summary.unreferenced);
}

TEST_CASE("one manifest's view: config fields, blobs and text layers", "[ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    LayerSpec tmpl = b.blob(kTemplateMediaType, "{{ .Prompt }}");
    LayerSpec system = b.blob(kSystemMediaType, std::string(kMaxTextBlobBytes + 10, 's'));
    LayerSpec params = b.blob(kParamsMediaType, "{\"stop\":[\"<end>\"]}");
    LayerSpec missing(std::string(kLicenseMediaType), "sha256:" + std::string(64, '1'), 3);
    LayerSpec model = b.tiny_model_layer();
    model.from = "llama3.2:latest";
    b.write_manifest("registry.ollama.ai/library/chat/v1", manifest_json(b.tiny_config_layer(), {model, tmpl, system, params, missing}));
    auto store = Store::open(b.root());
    REQUIRE(store);
    auto view = view_manifest(*store, *parse_model_reference("chat:v1"));
    REQUIRE(view);
    CHECK(view->stored.found);
    CHECK(view->stored.digest.starts_with("sha256:"));
    CHECK(view->format == "gguf");
    REQUIRE(view->config);
    CHECK(view->config->model_family == "llama");
    CHECK(view->config->model_families.items == std::vector<std::string>{"llama"});
    CHECK(view->config->architecture == "amd64");
    REQUIRE(view->layers.size() == 5);
    CHECK(view->layers[0].layer.from == std::string("llama3.2:latest"));
    CHECK(view->layers[0].blob->found());
    CHECK(view->layers[0].blob->name == "blobs/sha256-" + model.digest.substr(7));
    CHECK(!view->layers[0].text);
    REQUIRE(view->layers[1].text);
    CHECK(view->layers[1].text->text == "{{ .Prompt }}");
    REQUIRE(view->layers[2].text);
    CHECK(view->layers[2].text->text.size() == kMaxTextBlobBytes);
    CHECK(view->layers[2].text->size == kMaxTextBlobBytes + 10);
    CHECK(view->layers[2].text->truncated());
    CHECK(view->layers[3].text->text == "{\"stop\":[\"<end>\"]}");
    REQUIRE(view->layers[4].blob);
    CHECK(view->layers[4].blob->error->code == ErrorCode::E_BLOB_MISSING);
    CHECK(!view->layers[4].text);

    auto absent = view_manifest(*store, *parse_model_reference("nothere"));
    REQUIRE(!absent);
    CHECK(absent.error().code == ErrorCode::E_NOT_FOUND);
}

TEST_CASE("a store model's view reads a text blob its layers name many times once and holds its text layers to a budget", "[ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    const LayerSpec license = b.blob(kLicenseMediaType, std::string(3000, 'l'));
    const LayerSpec tmpl = b.blob(kTemplateMediaType, std::string(2000, 't'));
    const LayerSpec system = b.blob(kSystemMediaType, "be brief");
    std::vector<LayerSpec> layers = {b.tiny_model_layer()};
    for (int i = 0; i < 200; ++i) layers.push_back(license);
    layers.push_back(tmpl);
    layers.push_back(system);
    b.write_manifest("registry.ollama.ai/library/many/v1", manifest_json(b.tiny_config_layer(), layers));
    auto store = Store::open(b.root());
    REQUIRE(store);
    auto view = view_manifest(*store, *parse_model_reference("many:v1"), kMaxTextBlobBytes, 4000);
    REQUIRE(view);
    REQUIRE(view->layers.size() == 203);
    // The license is read once: every layer naming it holds the same text.
    REQUIRE(view->layers[1].text);
    CHECK(view->layers[1].text->text.size() == 3000);
    for (size_t i = 2; i <= 200; ++i) CHECK(view->layers[i].text == view->layers[1].text);
    // The template would take the 4,000 bytes past what is left: not read, E_TOO_LARGE at its layer.
    CHECK(!view->layers[201].text);
    REQUIRE(view->layers[201].text_error);
    CHECK(view->layers[201].text_error->code == ErrorCode::E_TOO_LARGE);
    CHECK(view->layers[201].text_error->field == "layers[201]");
    CHECK(view->layers[201].text_error->message ==
          "not read: the text layers before it hold 3000 bytes of the 4000 all text layers may hold (max_view_text_bytes)");
    // A smaller one after it still fits.
    REQUIRE(view->layers[202].text);
    CHECK(view->layers[202].text->text == "be brief");
}

TEST_CASE("config blobs parse every ConfigV2 field and refuse wrong types", "[ollama]") {
    const std::string text =
        "{\"model_format\":\"safetensors\",\"model_family\":\"qwen3\",\"model_families\":null,\"model_type\":\"8.0B\","
        "\"file_type\":\"nvfp4\",\"renderer\":\"r\",\"parser\":\"p\",\"requires\":\"0.19.0\",\"capabilities\":[\"completion\","
        "\"tools\"],\"context_length\":40960,\"embedding_length\":4096,\"base_name\":\"b\",\"draft\":{\"model_format\":"
        "\"safetensors\",\"architecture\":\"A\",\"tensor_prefix\":\"draft.\",\"config\":\"draft/config.json\"},"
        "\"architecture\":\"\",\"os\":\"\",\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:1\",\"sha256:2\"]},"
        "\"unknown\":{\"deep\":[1,2,{\"x\":null}]}}";
    auto c = parse_model_config(text);
    REQUIRE(c);
    CHECK(c->format() == "safetensors");
    CHECK(c->model_families.count == 0);
    CHECK(c->capabilities.items == std::vector<std::string>{"completion", "tools"});
    CHECK(c->requires_version == "0.19.0");
    CHECK(c->context_length == 40960u);
    CHECK(c->embedding_length == 4096u);
    REQUIRE(c->draft);
    CHECK(c->draft->tensor_prefix == "draft.");
    CHECK(c->draft->config == "draft/config.json");
    CHECK(c->has_rootfs);
    CHECK(c->rootfs_type == "layers");
    CHECK(c->rootfs_diff_ids.count == 2);
    CHECK(parse_model_config("{}")->format() == "gguf");

    auto bad = parse_model_config("{\"context_length\":\"big\"}");
    REQUIRE(!bad);
    CHECK(bad.error().code == ErrorCode::E_CONFIG_JSON);
    CHECK(bad.error().field == "config.context_length");
    CHECK(bad.error().offset == 18u);
    auto bad_item = parse_model_config("{\"capabilities\":[\"a\",7]}");
    REQUIRE(!bad_item);
    CHECK(bad_item.error().field == "config.capabilities");
    auto dup = parse_model_config("{\"os\":\"a\",\"os\":\"b\"}");
    REQUIRE(!dup);
    CHECK(dup.error().code == ErrorCode::E_CONFIG_JSON);
    CHECK(dup.error().message.find("duplicate") != std::string::npos);

    std::string many = "{\"model_families\":[";
    for (int i = 0; i < 5000; ++i) many += i ? ",\"f\"" : "\"f\"";
    auto big = parse_model_config(many + "]}");
    REQUIRE(big);
    CHECK(big->model_families.count == 5000);
    CHECK(big->model_families.items.size() == kMaxConfigListItems);
}

TEST_CASE("config_fields names what each config field is, beside Ollama's name for it", "[ollama]") {
    auto c = parse_model_config(
        "{\"model_format\":\"gguf\",\"model_family\":\"llama\",\"model_type\":\"4.2M\",\"file_type\":\"Q4_0\","
        "\"architecture\":\"amd64\",\"os\":\"linux\",\"model_families\":[\"llama\",\"clip\"],\"context_length\":256}");
    REQUIRE(c);
    std::vector<std::pair<std::string, std::string>> fields;
    for (const ConfigField& f : config_fields(*c)) fields.emplace_back(f.label, f.value);
    CHECK(fields ==
          std::vector<std::pair<std::string, std::string>>{{"format (model_format)", "gguf"},
                                                           {"family (model_family)", "llama"},
                                                           {"parameter size (model_type)", "4.2M"},
                                                           {"quantization (file_type)", "Q4_0"},
                                                           {"CPU architecture (architecture)", "amd64"},
                                                           {"operating system (os)", "linux"},
                                                           {"families (model_families)", "llama, clip"},
                                                           {"context length (context_length)", "256"}});
    CHECK(config_fields(*parse_model_config("{}")).empty());
    // A draft names only the parts it sets; one that sets none is left out.
    auto draft = parse_model_config("{\"draft\":{\"architecture\":\"llama\",\"tensor_prefix\":\"d.\"}}");
    REQUIRE(draft);
    REQUIRE(config_fields(*draft).size() == 1);
    CHECK(config_fields(*draft)[0].value == "llama prefix d.");
    CHECK(config_fields(*parse_model_config("{\"draft\":{}}")).empty());
}

TEST_CASE("sha256 of a blob: streamed, with progress, cancellable, regular files only", "[ollama]") {
    TempDir dir;
    std::string path = dir.file("data");
    std::string content(3u << 20, 'z');
    write_file(path, content);
    std::vector<uint64_t> progress;
    auto hash = sha256_file(path, nullptr, [&](uint64_t n) { progress.push_back(n); });
    REQUIRE(hash);
    CHECK(hash->hex == sha256_hex(content));
    CHECK(hash->bytes == content.size());
    CHECK(progress == std::vector<uint64_t>{1u << 20, 2u << 20, 3u << 20});

    JobContext job;
    job.cancel();
    auto cancelled = sha256_file(path, &job);
    REQUIRE(!cancelled);
    CHECK(cancelled.error().code == ErrorCode::E_CANCELLED);

    std::string fifo = dir.file("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto not_regular = sha256_file(fifo);
    REQUIRE(!not_regular);
    CHECK(not_regular.error().code == ErrorCode::E_NOT_REGULAR_FILE);

    REQUIRE(::symlink(path.c_str(), dir.file("link").c_str()) == 0);
    CHECK(!sha256_file(dir.file("link")));
}

TEST_CASE("verify_blob compares the content with the manifest's digest and reports the bytes hashed", "[ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    auto store = Store::open(b.root());
    REQUIRE(store);
    BlobDigest digest = *parse_blob_digest(b.tiny_model_layer().digest);
    BlobLookup blob = store->find_blob(digest);
    REQUIRE(blob.found());
    CHECK(blob.size == 256);
    JobContext job;
    CHECK(verify_blob(blob, digest, &job).ok());
    CHECK(job.progress() == 1.0);
    BlobDigest other = *parse_blob_digest("sha256:" + std::string(64, 'f'));
    Status st = verify_blob(blob, other);
    REQUIRE(!st);
    CHECK(st.error().code == ErrorCode::E_DIGEST_MISMATCH);
    CHECK(st.error().message.find("actual " + b.tiny_model_layer().digest) != std::string::npos);
}

TEST_CASE("the store check can be cancelled and can skip hashing", "[ollama]") {
    TempDir dir;
    OllamaStoreBuilder b(dir.path());
    b.add_tiny();
    write_file(b.blob_path(b.tiny_model_layer()), std::string(256, 'x'));  // corrupt, same size
    auto store = Store::open(b.root());
    REQUIRE(store);
    StoreCheckOptions no_hash;
    no_hash.verify_digests = false;
    no_hash.parse_blobs = false;
    StoreCheckReport quick = check_store(*store, no_hash).value;
    CHECK(quick.error_count() == 0);
    CHECK(quick.blobs_checked == 0);

    StoreCheckReport full = check_store(*store).value;
    CHECK(full.error_count() == 2);  // E_DIGEST_MISMATCH and the GGUF parser's E_BAD_MAGIC

    JobContext job;
    job.cancel();
    Partial<StoreCheckReport> checked = check_store(*store, {}, &job);
    CHECK(checked.cancelled());
    const StoreCheckReport& cancelled = checked.value;
    REQUIRE(!cancelled.diagnostics.empty());
    CHECK(cancelled.diagnostics.back().code == ErrorCode::E_CANCELLED);
}
