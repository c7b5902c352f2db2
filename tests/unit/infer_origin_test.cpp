// Loading for inference converts only on evidence of Ollama origin (model_loader.h): llama.cpp's own
// Llama-3 vocabulary, which the shim's Llama-3 fix would rewrite, reaches llama.cpp unmodified;
// an Ollama-made Llama-3 file goes through the upstream export unless it is loaded as it is.
#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "mlens/infer/model_loader.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
using namespace mlens::test;

namespace {

const char* kEos128001 = "EOS token             = 128001 '<|end_of_text|>'";
const char* kEos128009 = "EOS token             = 128009 '<|eot_id|>'";

SessionOptions vocab_only(bool as_is) {
    SessionOptions options;
    options.vocab_only = true;
    options.as_is = as_is;
    return options;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("llama.cpp's own Llama-3 vocabulary loads as it is, with EOS 128001", "[infer][origin]") {
    const std::string path = llama_source_dir() + "/models/ggml-vocab-llama-bpe.gguf";
    auto loaded = load_model_session(path, vocab_only(false));
    REQUIRE(loaded);
    CHECK_FALSE(loaded->route.through_export);
    CHECK(loaded->route.banner.empty());
    CHECK(loaded->session->facts().eos == 128001);

    CliRun run = run_mlens({"tokenize", path, "Hello", "--log"});
    CHECK(run.exit_status == 0);
    CHECK_FALSE(has(run.err, "upstream export"));
    CHECK(has(run.err, kEos128001));
}

TEST_CASE("an Ollama-made Llama-3 file goes through the export, or to llama.cpp as it is with --as-is", "[infer][origin]") {
    TempDir dir;
    write_tiny_model(tiny_llama3(TinyLayout::ollama), dir.file("ollama.gguf"));
    const std::string banner =
        "Ollama-made GGUF: loaded through the upstream export (handle_llama3_metadata); evidence: llama: all 16 keys in "
        "sorted order, as Ollama's GGUF writer writes them";

    auto converted = load_model_session(dir.file("ollama.gguf"), vocab_only(false));
    REQUIRE(converted);
    CHECK(converted->route.through_export);
    CHECK(converted->route.banner == banner);
    CHECK(converted->session->facts().eos == 128009);

    auto as_is = load_model_session(dir.file("ollama.gguf"), vocab_only(true));
    REQUIRE(as_is);
    CHECK_FALSE(as_is->route.through_export);
    CHECK(as_is->route.banner.empty());
    CHECK(as_is->session->facts().eos == 128001);

    CliRun run = run_mlens({"tokenize", dir.file("ollama.gguf"), "Hello", "--log"});
    CHECK(run.exit_status == 0);
    CHECK(has(run.err, "note: " + dir.file("ollama.gguf") + ": " + banner));
    CHECK(has(run.err, kEos128009));

    CliRun raw = run_mlens({"tokenize", dir.file("ollama.gguf"), "Hello", "--log", "--as-is"});
    CHECK(raw.exit_status == 0);
    CHECK_FALSE(has(raw.err, "upstream export"));
    CHECK(has(raw.err, kEos128001));
}
