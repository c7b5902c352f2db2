// open/target.h and open/identify.h: what a path or reference names, decided once — model files by
// content, folders, store roots and store models, missing paths and files that are no model —
// and each file opened once.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "failing_source.h"
#include "gguf_builder.h"
#include "mlens/open/identify.h"
#include "mlens/open/target.h"
#include "ollama_store_builder.h"
#include "safetensors_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

namespace {

Error not_a_model_error(const std::vector<uint8_t>& bytes) {
    auto format = identify_file(*memory_source(bytes));
    REQUIRE_FALSE(format.ok());
    return format.error();
}

std::vector<uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

}  // namespace

TEST_CASE("identify_file tells GGUF and safetensors by content and names everything else", "[open]") {
    CHECK(*identify_file(*memory_source(t1_bytes())) == Format::gguf);
    CHECK(*identify_file(*memory_source(s1_bytes())) == Format::safetensors);
    // The magic alone is a (truncated) GGUF: its reader says where it ends.
    CHECK(*identify_file(*memory_source(bytes_of("GGUF\x03"))) == Format::gguf);

    Error empty = not_a_model_error({});
    CHECK(empty.code == ErrorCode::E_NOT_A_MODEL);
    CHECK(empty.message == "empty file (0 bytes)");
    CHECK(not_a_model_error(bytes_of("12345")).message == "5 bytes: too short for a GGUF (24-byte header) or safetensors (8-byte length)");
    CHECK(not_a_model_error(bytes_of("root:x:0:0:root:/root:/bin/bash\n")).message ==
          "not a model file: 32 bytes, starts with \"root:x:0:0:root:\"\xE2\x80\xA6");
    CHECK(not_a_model_error(bytes_of("\x1B]0;pwned\x07\n")).message ==
          "not a model file: 11 bytes, starts with \"\\x1B]0;pwned\\x07\\x0A\"");
    CHECK(not_a_model_error(bytes_of(std::string_view("tjgg\x01\x00\x00\x00\xFF\xFF\xFF\xFF", 12))).message ==
          "legacy GGML/GGMF/GGJT/GGLA model file, not supported (12 bytes): magic 74 6A 67 67");
}

TEST_CASE("a source that cannot give its first bytes is identified by its own failure", "[open]") {
    const test::FailingSource source(t1_bytes(), 0, "E_REMOTE_CHANGED: http://h/m.gguf: the file changed on the server since it was opened");
    const auto format = identify_file(source);
    REQUIRE_FALSE(format);
    CHECK(format.error().code == ErrorCode::E_REMOTE_CHANGED);
    CHECK(format.error().message == "cannot read the first 16 bytes: http://h/m.gguf: the file changed on the server since it was opened");
}

TEST_CASE("resolve names files, folders, stores and store models", "[open]") {
    TempDir dir;
    write_whole_file(dir.file("model.bin"), t1_bytes());
    write_whole_file(dir.file("weights.gguf"), s1_bytes());
    std::filesystem::create_directory(dir.file("hf"));
    write_whole_file(dir.file("hf/model.safetensors"), s1_bytes());
    OllamaStoreBuilder store(dir.file("store"));
    store.add_tiny();

    Target gguf = resolve(dir.file("model.bin"));
    CHECK(gguf.kind == TargetKind::model_file);
    CHECK(gguf.format == Format::gguf);
    CHECK(std::string(target_kind_name(gguf)) == "GGUF file");
    Target st = resolve(dir.file("weights.gguf"));  // the name does not matter
    CHECK(st.kind == TargetKind::model_file);
    CHECK(st.format == Format::safetensors);
    CHECK(resolve(dir.file("hf")).kind == TargetKind::safetensors_folder);

    Target root = resolve(store.root());
    CHECK(root.kind == TargetKind::store_root);
    REQUIRE(root.store);
    auto as_model = open_target(root);
    REQUIRE_FALSE(as_model.ok());
    CHECK(as_model.error().code == ErrorCode::E_STORE_ROOT);

    const std::string manifest = store.root() + "/manifests/registry.ollama.ai/library/tiny/latest";
    for (const std::string& text : {store.root() + "/tiny", store.root() + "/tiny:latest", manifest}) {
        INFO(text);
        Target t = resolve(text);
        CHECK(t.kind == TargetKind::store_model);
        CHECK(t.name.display() == "tiny:latest");
        CHECK(std::filesystem::equivalent(t.path, manifest));
        auto m = open_target(t);
        REQUIRE(m.ok());
        CHECK(m->files[0].path == store.blob_path(store.tiny_model_layer()));
    }
}

TEST_CASE("resolve says what is not a model and what is missing", "[open]") {
    TempDir dir, elsewhere;
    ScopedEnv env("OLLAMA_MODELS", elsewhere.path());
    write_whole_file(dir.file("empty.safetensors"), {});
    write_whole_file(dir.file("five.safetensors"), bytes_of("{\"a\":"));
    std::filesystem::create_directories(dir.file("only-blobs/blobs"));
    std::filesystem::create_directory(dir.file("plain"));
    REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);

    struct Case {
        std::string path;
        std::string code;
        std::string message;
    };
    for (const Case& c : {
             Case{dir.file("empty.safetensors"), "E_NOT_A_MODEL", "empty file (0 bytes)"},
             Case{dir.file("five.safetensors"), "E_NOT_A_MODEL",
                  "5 bytes: too short for a GGUF (24-byte header) or safetensors (8-byte length)"},
             Case{dir.file("only-blobs"), "E_NOT_A_MODEL",
                  "a folder with blobs/ but no manifests/: not an Ollama store (its models are named in manifests/), "
                  "and no safetensors weights"},
             Case{dir.file("plain"), "E_NOT_A_MODEL",
                  "a folder without safetensors weights (*.safetensors or *.safetensors.index.json) and without "
                  "manifests/ (not an Ollama store)"},
         }) {
        INFO(c.path);
        Target t = resolve(c.path);
        CHECK(t.kind == TargetKind::not_a_model);
        CHECK(code_name(t.problem.code) == c.code);
        CHECK(t.problem.message == c.message);
        auto opened = open_target(t);
        REQUIRE_FALSE(opened.ok());
        CHECK(opened.error().message == c.message);
    }
    Target fifo = resolve(dir.file("fifo"));
    CHECK(fifo.kind == TargetKind::not_a_model);
    CHECK(fifo.problem.code == ErrorCode::E_NOT_REGULAR_FILE);

    Target missing = resolve(dir.file("absent.gguf"));
    CHECK(missing.kind == TargetKind::missing);
    CHECK(missing.problem.code == ErrorCode::E_NOT_FOUND);
    Target reference = resolve("absent:tag");
    CHECK(reference.kind == TargetKind::missing);
    CHECK(reference.problem.message == "no such file or directory, and no Ollama model absent:tag in any store (none found)");
}

TEST_CASE("open_target reads the file resolve opened, once", "[open]") {
    TempDir dir;
    write_whole_file(dir.file("m.gguf"), t1_bytes());
    Target t = resolve(dir.file("m.gguf"));
    REQUIRE(t.source);
    // Replaced after resolve: the model is still the file resolve identified.
    write_whole_file(dir.file("other.gguf"), s1_bytes());
    std::filesystem::rename(dir.file("other.gguf"), dir.file("m.gguf"));
    auto m = open_target(t);
    REQUIRE(m.ok());
    CHECK(m->format == Format::gguf);
    CHECK(m->error_count() == 0);
    CHECK(m->files[0].source == t.source);
}
