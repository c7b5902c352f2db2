// What the app's exports may not replace: the files of every open document, through links, and
// anything in an open Ollama store.
#include <catch2/catch.hpp>

#include <filesystem>

#include "gguf_builder.h"
#include "mlens/io/safe_file_writer.h"
#include "ollama_store_builder.h"
#include "state/output_inputs.h"
#include "state/settings.h"
#include "workspace_harness.h"

using namespace mlens;
namespace fs = std::filesystem;

TEST_CASE("GUI exports never replace a file of an open document", "[gui-output]") {
    test::TempDir dir;
    test::write_whole_file(dir.file("a.gguf"), test::t1_bytes());
    test::write_whole_file(dir.file("b.gguf"), test::t1_bytes());
    fs::create_symlink(dir.file("a.gguf"), dir.file("a-link.gguf"));
    fs::create_hard_link(dir.file("b.gguf"), dir.file("b-hard.gguf"));
    fs::create_directory(dir.file("store"));
    test::OllamaStoreBuilder store(dir.file("store"));
    store.add_tiny();
    const std::string blob = store.blob_path(store.tiny_model_layer());
    const std::vector<uint8_t> blob_bytes = test::read_whole_file(blob);

    test::WorkspaceHarness h;
    std::vector<Document*> docs = h.open_all({dir.file("a.gguf"), dir.file("b.gguf"), dir.file("store")});
    const std::string text = "name,type\n";
    // The export of document a (a CSV, a PNG capture, a settings file) onto b's file, a link to
    // a, or a blob of the open store.
    for (const std::string& target : {dir.file("a-link.gguf"), dir.file("b-hard.gguf"), dir.file("b.gguf"), blob}) {
        INFO(target);
        OutputGuard guard = gui_output_guard(docs[0], &h.workspace);
        Status s = write_files_safely(guard, {{target, text.data(), text.size()}});
        REQUIRE(!s);
        // A blob is refused as part of the open store, which no output may enter.
        CHECK(s.error().code == (target == blob ? ErrorCode::E_OUTPUT_IN_STORE : ErrorCode::E_OUTPUT_IS_INPUT));
        Settings settings;
        CHECK_FALSE(settings.save(target, gui_output_guard(nullptr, &h.workspace)));
    }
    // Without the workspace (a panel in a bare test), the document's own files stay protected.
    OutputGuard own = gui_output_guard(docs[0], nullptr);
    Status s = write_files_safely(own, {{dir.file("a-link.gguf"), text.data(), text.size()}});
    REQUIRE(!s);
    CHECK(s.error().code == ErrorCode::E_OUTPUT_IS_INPUT);

    CHECK(test::read_whole_file(dir.file("a.gguf")) == test::t1_bytes());
    CHECK(test::read_whole_file(dir.file("b.gguf")) == test::t1_bytes());
    CHECK(test::read_whole_file(blob) == blob_bytes);
    CHECK(test::leftovers_in(dir.path()) == 0);
    OutputGuard guard = gui_output_guard(docs[0], &h.workspace);
    REQUIRE(write_files_safely(guard, {{dir.file("tensors.csv"), text.data(), text.size()}}));
    CHECK(test::read_whole_file(dir.file("tensors.csv")) == std::vector<uint8_t>(text.begin(), text.end()));
}
