// Errors that guide: a mistyped tensor, type or imatrix entry gets the nearest real name, type
// names are read in any case as llama-quantize reads them, and requant --imatrix carries on, as
// llama-quantize does, for a tensor the matrix has no entry for.
#include <catch2/catch.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "test_paths.h"

using namespace mlens;

namespace {

const std::string kDemo = MLENS_DEMO_DIR;
const std::string kImatrix = std::string(MLENS_IMATRIX_FIXTURES) + "/tiny-llama-f32.imatrix.gguf";

}  // namespace

TEST_CASE("a mistyped tensor, type or imatrix entry is answered with the nearest name", "[cli][hints]") {
    test::CliRun stats = test::run_mlens({"stats", kDemo + "/tiny-llama-q4_0.gguf", "blk.0.attn_q.weigth"});
    CHECK(stats.exit_status == 1);
    CHECK(stats.err.find("no tensor named blk.0.attn_q.weigth; did you mean blk.0.attn_q.weight?") != std::string::npos);

    test::CliRun requant = test::run_mlens({"requant", kDemo + "/tiny-llama-q4_0.gguf", "blk.1.ffn_dwn.weight"});
    CHECK(requant.exit_status == 1);
    CHECK(requant.err.find("no such tensor in " + kDemo + "/tiny-llama-q4_0.gguf; did you mean blk.1.ffn_down.weight?") !=
          std::string::npos);

    test::CliRun type = test::run_mlens({"requant", kDemo + "/tiny-llama-q4_0.gguf", "blk.0.attn_q.weight", "--types", "Q8_O"});
    CHECK(type.exit_status == 2);
    CHECK(type.err.find("unknown ggml type Q8_O; did you mean Q8_0?") != std::string::npos);

    test::CliRun entry = test::run_mlens({"imatrix", kImatrix, "--tensor", "blk.0.attn_k"});
    CHECK(entry.exit_status == 1);
    CHECK(entry.err.find("has no entry blk.0.attn_k; did you mean blk.0.attn_k.weight?") != std::string::npos);

    // Nothing near: no hint.
    test::CliRun far = test::run_mlens({"stats", kDemo + "/tiny-llama-q4_0.gguf", "zzzz"});
    CHECK(far.exit_status == 1);
    CHECK(far.err.find("did you mean") == std::string::npos);
}

TEST_CASE("type names are read in any case, as llama-quantize reads them", "[cli][hints]") {
    const nlohmann::json lower =
        test::run_mlens_json({"requant", kDemo + "/tiny-llama-f32.gguf", "blk.0.attn_q.weight", "--types", "q8_0,q4_k", "--json"});
    const nlohmann::json upper =
        test::run_mlens_json({"requant", kDemo + "/tiny-llama-f32.gguf", "blk.0.attn_q.weight", "--types", "Q8_0,Q4_K", "--json"});
    REQUIRE(lower["types"].size() == 2);
    CHECK(lower["types"] == upper["types"]);
    CHECK(lower["types"][0]["type"] == "Q8_0");
}

TEST_CASE("requant --imatrix quantizes a tensor without an entry without importance, and says so", "[cli][hints][imatrix]") {
    test::CliRun run = test::run_mlens({"requant", kDemo + "/tiny-llama-f32.gguf", "token_embd.weight", "--types", "Q4_K", "--imatrix", kImatrix});
    INFO(run.err);
    CHECK(run.exit_status == 0);
    CHECK(run.err == "note: " + kImatrix + " has no entry for token_embd.weight: requantized without importance, as llama-quantize does\n");
    // The same figures as without the matrix.
    test::CliRun plain = test::run_mlens({"requant", kDemo + "/tiny-llama-f32.gguf", "token_embd.weight", "--types", "Q4_K"});
    CHECK(run.out == plain.out);
}
