// mlens tokenize / run / ab / layers: JSON output checked against the core API.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "mlens/infer/generate.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

}  // namespace

TEST_CASE("mlens tokenize prints ids, pieces and bytes", "[infer][cli]") {
    const std::string vocab = test::llama_source_dir() + "/models/ggml-vocab-llama-spm.gguf";
    nlohmann::json j = test::run_mlens_json({"tokenize", vocab, "Hello world", "--json"});
    CHECK(j["count"] == 3);
    CHECK(j["tokens"][0]["id"] == 1);
    CHECK(j["tokens"][1]["id"] == 15043);
    CHECK(j["tokens"][1]["piece"] == " Hello");
    CHECK(j["tokens"][1]["bytes"] == "20 48 65 6C 6C 6F");
    CHECK(j["tokens"][2]["id"] == 3186);
    CHECK(j["detokenized"] == "<s> Hello world");
    nlohmann::json plain = test::run_mlens_json({"tokenize", vocab, "<s>x", "--no-bos", "--no-special", "--json"});
    CHECK(plain["tokens"][0]["id"] != 1);
    nlohmann::json special = test::run_mlens_json({"tokenize", vocab, "<s>x", "--no-bos", "--json"});
    CHECK(special["tokens"][0]["id"] == 1);
    test::CliRun text = test::run_mlens({"tokenize", vocab, "Hello world"});
    CHECK(text.exit_status == 0);
    CHECK_THAT(text.out, Catch::Contains("0      1  '<s>'     3C 73 3E"));
    CHECK_THAT(text.out, Catch::Contains("3 tokens; detokenized: <s> Hello world"));
}

TEST_CASE("mlens run generates the same tokens as the core, with candidates and speeds", "[infer][cli]") {
    nlohmann::json j = test::run_mlens_json(
        {"run", demo("tiny-llama-f32.gguf"), "-p", "Once upon a time", "-n", "4", "--top-k", "3", "--json", "--threads", "2"});
    SessionOptions o;
    o.n_threads = 2;
    auto session = Session::load(demo("tiny-llama-f32.gguf"), o);
    REQUIRE(session.ok());
    GenerateOptions g;
    g.max_tokens = 4;
    g.n_candidates = 3;
    auto expected = generate(**session, "Once upon a time", g);
    REQUIRE(expected.ok());
    REQUIRE(j["steps"].size() == 4);
    for (size_t i = 0; i < 4; ++i) {
        CHECK(j["steps"][i]["id"] == expected->steps[i].token);
        CHECK(j["steps"][i]["candidates"].size() == 3);
    }
    CHECK(j["prompt_tokens"] == expected->prompt_tokens);
    CHECK(j["text"] == expected->text);
    CHECK(j["stop"] == "max_tokens");
    CHECK(j["model"]["n_layer"] == 2);
    CHECK(j["prompt_tokens_per_s"].get<double>() > 0.0);
    CHECK(j["generation_tokens_per_s"].get<double>() > 0.0);
}

TEST_CASE("mlens ab and mlens layers", "[infer][cli]") {
    nlohmann::json same =
        test::run_mlens_json({"ab", demo("tiny-llama-q8_0.gguf"), demo("tiny-llama-q8_0.gguf"), "-p", "Hello there", "-n", "2", "--json"});
    CHECK(same["summary"]["mean_kld"] == 0.0);
    CHECK(same["summary"]["same_top_share"] == 1.0);
    CHECK(same["summary"]["first_divergence"] == -1);
    CHECK(same["positions"].size() == same["n_prompt"].get<size_t>() + 1);

    nlohmann::json layers =
        test::run_mlens_json({"layers", demo("tiny-llama-f32.gguf"), "-p", "Hello", "--names", "l_out,attn_norm", "--json"});
    REQUIRE(layers["activations"].size() == 4);
    CHECK(layers["activations"][0]["tensor"] == "l_out-0");
    CHECK(layers["activations"][1]["tensor"] == "attn_norm-0");
    CHECK(layers["activations"][3]["tensor"] == "attn_norm-1");
    CHECK(layers["activations"][3]["count"] == 64);
}

TEST_CASE("mlens run and ab on files llama.cpp cannot load exit 1 with its message", "[infer][cli]") {
    test::TempDir dir;
    std::vector<uint8_t> bytes = test::read_whole_file(demo("tiny-llama-f32.gguf"));
    bytes.resize(bytes.size() / 2);
    test::write_whole_file(dir.file("cut.gguf"), bytes);
    test::CliRun r = test::run_mlens({"run", dir.file("cut.gguf"), "-p", "hi"});
    CHECK(r.exit_status == 1);
    CHECK(r.out.empty());
    CHECK_THAT(r.err,
               Catch::Contains("E_LLAMA_LOAD: llama.cpp could not load the model: llama_model_load: error loading "
                               "model: tensor 'token_embd.weight' data is not within the file bounds"));
    // A vocab-only file has no weights: B fails to load with llama.cpp's reason.
    test::CliRun no_weights =
        test::run_mlens({"ab", demo("tiny-llama-f32.gguf"), test::llama_source_dir() + "/models/ggml-vocab-qwen2.gguf", "-p", "hi"});
    CHECK(no_weights.exit_status == 1);
    CHECK(no_weights.out.empty());
    CHECK_THAT(no_weights.err,
               Catch::Contains("error: " + test::llama_source_dir() + "/models/ggml-vocab-qwen2.gguf: E_LLAMA_LOAD: model B: llama.cpp could not load the model: "
                               "llama_model_load: error loading model: check_tensor_dims: tensor "
                               "'token_embd.weight' not found"));
}
