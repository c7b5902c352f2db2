// open_model (open/target.h) with an Ollama model reference: the model comes from the default store
// ($OLLAMA_MODELS here) or from the store a STORE/reference path names, a file of the same name
// wins, and an unknown reference fails like a missing file.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdlib>
#include <fstream>

#include "mlens/ollama/model_name.h"
#include "mlens/ollama/store.h"
#include "mlens/open/target.h"
#include "ollama_store_builder.h"
#include "test_paths.h"

using namespace mlens;
using namespace mlens::test;

TEST_CASE("open_model opens a model reference from the store in OLLAMA_MODELS", "[ollama][open]") {
    TempDir dir;
    OllamaStoreBuilder store(dir.path());
    store.add_tiny();
    ScopedEnv env("OLLAMA_MODELS", dir.path());

    auto by_name = open_model("tiny");
    REQUIRE(by_name.ok());
    CHECK(by_name->format == Format::gguf);
    CHECK(by_name->error_count() == 0);
    REQUIRE(by_name->files.size() == 1);
    CHECK(by_name->files[0].path == store.blob_path(store.tiny_model_layer()));
    CHECK(open_model("registry.ollama.ai/library/tiny:latest").ok());

    auto missing = open_model("absent:tag");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == ErrorCode::E_NOT_FOUND);

    TempDir cwd;
    char previous[4096];
    REQUIRE(::getcwd(previous, sizeof previous));
    REQUIRE(::chdir(cwd.path().c_str()) == 0);
    std::ofstream("tiny") << "not a model";
    Target file_wins = resolve("tiny");
    REQUIRE(::chdir(previous) == 0);
    CHECK(file_wins.kind == TargetKind::not_a_model);
    CHECK(file_wins.path == "tiny");
    CHECK(file_wins.problem.message == "not a model file: 11 bytes, starts with \"not a model\"");
}

TEST_CASE("open_model opens STORE/reference from the store at that path", "[ollama][open]") {
    TempDir dir, elsewhere;
    const std::string root = dir.path() + "/my store";
    OllamaStoreBuilder store(root);
    store.add_tiny();
    ScopedEnv env("OLLAMA_MODELS", elsewhere.path());  // a default store without the model

    REQUIRE_FALSE(open_model("tiny").ok());
    auto by_path = open_model(root + "/tiny");
    REQUIRE(by_path.ok());
    CHECK(by_path->format == Format::gguf);
    REQUIRE(by_path->files.size() == 1);
    CHECK(by_path->files[0].path == store.blob_path(store.tiny_model_layer()));
    CHECK(open_model(root + "/registry.ollama.ai/library/tiny:latest").ok());
    CHECK(resolve(root + "/tiny:latest").path == root + "/manifests/registry.ollama.ai/library/tiny/latest");

    // A directory that is not a store, or a store without the model, is a missing path.
    CHECK(open_model(dir.path() + "/tiny").error().code == ErrorCode::E_NOT_FOUND);
    CHECK(open_model(root + "/absent:tag").error().code == ErrorCode::E_NOT_FOUND);
    CHECK(resolve(root + "/absent:tag").kind == TargetKind::missing);
}

TEST_CASE("a manifest refused for its size is reported as such, not as missing", "[ollama][open]") {
    TempDir dir;
    OllamaStoreBuilder store(dir.path());
    store.add_tiny();
    // 5 MiB of whitespace inside valid JSON: past the 4 MiB manifest limit.
    store.write_manifest("registry.ollama.ai/library/big/latest", "{" + std::string(5u << 20, ' ') + "}");
    auto big = [&] {
        ScopedEnv env("OLLAMA_MODELS", dir.path());
        return open_model("big");
    }();
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().code == ErrorCode::E_MANIFEST_TOO_LARGE);

    Store s = *Store::open(dir.path());
    CHECK(s.read_manifest(*parse_model_reference("big")).present());
    CHECK_FALSE(s.read_manifest(*parse_model_reference("big")).found);
    CHECK_FALSE(s.read_manifest(*parse_model_reference("absent")).present());
    CHECK(s.read_manifest(*parse_model_reference("tiny")).present());
}
