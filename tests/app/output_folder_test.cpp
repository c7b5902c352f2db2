// Where exports are proposed: next to a model file, else the downloads folder, never the working
// directory first; Browse moves a path's last component into the folder picked.
#include <catch2/catch.hpp>

#include <filesystem>

#include "state/output_folder.h"
#include "test_paths.h"

using namespace mlens;
namespace fs = std::filesystem;

TEST_CASE("the default output folder is Downloads, else home, else the working directory", "[gui-output]") {
    test::TempDir home;
    CHECK(default_output_folder(home.path().c_str()) == fs::path(home.path()).lexically_normal().string());
    fs::create_directory(home.file("Downloads"));
    CHECK(default_output_folder(home.path().c_str()) == home.file("Downloads"));
    CHECK(default_output_folder(nullptr) == fs::current_path().string());
    CHECK(default_output_folder("") == fs::current_path().string());
    CHECK(default_output_folder(home.file("missing").c_str()) == fs::current_path().string());
}

TEST_CASE("an export goes next to a model file, and elsewhere to the downloads folder", "[gui-output]") {
    test::TempDir home, models;
    fs::create_directory(home.file("Downloads"));
    test::write_whole_file(models.file("m.gguf"), std::vector<uint8_t>{1, 2, 3});
    test::write_whole_file(models.file("manifest-latest"), std::vector<uint8_t>{1});
    CHECK(output_folder_for(models.file("m.gguf"), home.path().c_str()) == models.path());
    // A store manifest or blob lies in its store: never proposed as the output folder.
    CHECK(output_folder_for(models.file("manifest-latest"), home.path().c_str()) == home.file("Downloads"));
    // A folder document (safetensors folder, store) and a path that is gone.
    CHECK(output_folder_for(models.path(), home.path().c_str()) == home.file("Downloads"));
    CHECK(output_folder_for(models.file("gone.gguf"), home.path().c_str()) == home.file("Downloads"));
}

TEST_CASE("with_folder keeps the name and changes the folder", "[gui-output]") {
    CHECK(with_folder("/a/b/model.upstream.gguf", "/c") == "/c/model.upstream.gguf");
    CHECK(with_folder("/a/b/tiny-llama-q4_0-gguf", "/home/u/Downloads") == "/home/u/Downloads/tiny-llama-q4_0-gguf");
    CHECK(with_folder("/a/b/out/", "/c") == "/c/out");
}
