// core/infer sessions and generation on the demo models, checked against a plain loop written
// directly against llama.cpp's API.
#include <catch2/catch.hpp>

#include <ggml.h>
#include <llama.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <vector>

#include "build_paths.h"
#include "cli_runner.h"
#include "llama_logits.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/llama_log.h"
#include "mlens/infer/session.h"
#include "mlens/util/build_info.h"
#include "test_paths.h"

using namespace mlens;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

SessionOptions demo_options() {
    SessionOptions o;
    o.n_threads = 2;
    o.n_ctx = 256;
    return o;
}

// Greedy generation the way a llama.cpp example does it, with the session's context settings.
std::vector<int32_t> reference_greedy(const std::string& path, const std::string& prompt, int n) {
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model* model = llama_model_load_from_file(path.c_str(), mp);
    REQUIRE(model != nullptr);
    const llama_vocab* vocab = llama_model_get_vocab(model);
    llama_context* ctx = llama_init_from_model(model, test::context_params(256, 2));
    REQUIRE(ctx != nullptr);
    std::vector<llama_token> tokens(prompt.size() + 4);
    int32_t n_prompt = llama_tokenize(vocab, prompt.data(), static_cast<int32_t>(prompt.size()), tokens.data(),
                                      static_cast<int32_t>(tokens.size()), true, true);
    REQUIRE(n_prompt > 0);
    tokens.resize(static_cast<size_t>(n_prompt));
    std::vector<int32_t> out;
    REQUIRE(llama_decode(ctx, llama_batch_get_one(tokens.data(), n_prompt)) == 0);
    const int32_t n_vocab = llama_vocab_n_tokens(vocab);
    for (int i = 0; i < n; ++i) {
        const float* logits = llama_get_logits_ith(ctx, -1);
        llama_token best = 0;
        for (llama_token t = 1; t < n_vocab; ++t)
            if (logits[t] > logits[best]) best = t;
        out.push_back(best);
        if (i + 1 < n) REQUIRE(llama_decode(ctx, llama_batch_get_one(&best, 1)) == 0);
    }
    llama_free(ctx);
    llama_model_free(model);
    return out;
}

}  // namespace

TEST_CASE("a session reports the demo model's facts from llama.cpp", "[infer]") {
    JobContext job;
    auto session = Session::load(demo("tiny-llama-f32.gguf"), demo_options(), &job);
    REQUIRE(session.ok());
    const ModelFacts& f = (*session)->facts();
    CHECK(f.architecture == "llama");
    CHECK(f.n_layer == 2);
    CHECK(f.n_embd == 64);
    CHECK(f.n_head == 4);
    CHECK(f.n_head_kv == 2);
    CHECK(f.n_vocab == 32000);
    CHECK(f.n_ctx_train == 256);
    CHECK(f.n_params == 2u * 64 * 32000 + 64 + 2 * (2 * 64 + 64 * 64 * 2 + 64 * 32 * 2 + 3 * 64 * 192));
    CHECK(f.vocab_type == "spm");
    CHECK(f.bos == 1);
    CHECK(f.eos == 2);
    CHECK(f.add_bos);
    CHECK_FALSE(f.has_chat_template);
    CHECK((*session)->n_ctx() == 256);
    CHECK(job.progress() == 1.0);
    CHECK((*session)->log().total() > 0);  // llama.cpp's load lines were captured
}

TEST_CASE("greedy generation gives the token ids of a plain llama.cpp loop", "[infer]") {
    const std::string prompt = "Once upon a time there was";
    for (const char* name : {"tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf"}) {
        INFO(name);
        auto session = Session::load(demo(name), demo_options());
        REQUIRE(session.ok());
        GenerateOptions options;
        options.max_tokens = 8;
        options.stop_at_eog = false;
        auto result = generate(**session, prompt, options);
        REQUIRE(result.ok());
        std::vector<int32_t> ids;
        for (const GenerationStep& s : result->steps) ids.push_back(s.token);
        CHECK(ids == reference_greedy(demo(name), prompt, 8));
        CHECK(result->prompt_tokens.size() == 7);
        CHECK(result->prompt_tokens[0] == 1);
        CHECK(result->generation_decoded == 7);
        CHECK(result->prompt_tokens_per_s > 0.0);
        CHECK(result->generation_tokens_per_s > 0.0);
        // A second run on the same session starts from a cleared context.
        auto again = generate(**session, prompt, options);
        REQUIRE(again.ok());
        for (size_t i = 0; i < ids.size(); ++i) CHECK(again->steps[i].token == ids[i]);
    }
}

TEST_CASE("every step carries top-k candidates with probabilities over the full vocabulary", "[infer]") {
    auto session = Session::load(demo("tiny-llama-f32.gguf"), demo_options());
    REQUIRE(session.ok());
    GenerateOptions options;
    options.max_tokens = 4;
    options.n_candidates = 6;
    size_t streamed = 0;
    auto result = generate(**session, "The capital of France is", options, nullptr, [&](const GenerationStep&) { ++streamed; });
    REQUIRE(result.ok());
    CHECK(streamed == 4);
    REQUIRE(result->steps.size() == 4);
    for (const GenerationStep& s : result->steps) {
        REQUIRE(s.candidates.size() == 6);
        CHECK(s.candidates[0].id == s.token);  // greedy picks the top candidate
        CHECK(s.prob == s.candidates[0].prob);
        double sum = 0.0;
        for (size_t i = 0; i < s.candidates.size(); ++i) {
            sum += s.candidates[i].prob;
            if (i > 0) CHECK(s.candidates[i].logit <= s.candidates[i - 1].logit);
            if (i > 0) CHECK(s.candidates[i].prob <= s.candidates[i - 1].prob);
        }
        CHECK(sum > 0.0);
        CHECK(sum < 1.0);
        CHECK(s.piece == s.candidates[0].piece);
    }
}

TEST_CASE("sampling with a seed repeats, and differs from greedy for a hot temperature", "[infer]") {
    auto session = Session::load(demo("tiny-llama-f32.gguf"), demo_options());
    REQUIRE(session.ok());
    GenerateOptions options;
    options.max_tokens = 6;
    options.stop_at_eog = false;
    options.sampling.temperature = 5.0f;
    options.sampling.top_k = 0;
    options.sampling.top_p = 1.0f;
    options.sampling.seed = 42;
    auto ids_of = [&](const GenerateOptions& o) {
        auto r = generate(**session, "Hello", o);
        REQUIRE(r.ok());
        std::vector<int32_t> ids;
        for (const auto& s : r->steps) ids.push_back(s.token);
        return ids;
    };
    auto first = ids_of(options);
    CHECK(ids_of(options) == first);
    GenerateOptions other_seed = options;
    other_seed.sampling.seed = 43;
    CHECK(ids_of(other_seed) != first);
    GenerateOptions greedy = options;
    greedy.sampling.temperature = 0.0f;
    CHECK(ids_of(greedy) != first);
    GenerateOptions top1 = options;
    top1.sampling.top_k = 1;
    CHECK(ids_of(top1) == ids_of(greedy));
}

TEST_CASE("generation stops on cancel and refuses vocab-only sessions", "[infer]") {
    auto session = Session::load(demo("tiny-llama-f32.gguf"), demo_options());
    REQUIRE(session.ok());
    JobContext job;
    GenerateOptions options;
    options.max_tokens = 50;
    options.stop_at_eog = false;
    int steps = 0;
    auto result = generate(**session, "Hello", options, &job, [&](const GenerationStep&) {
        if (++steps == 3) job.cancel();
    });
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::E_CANCELLED);
    CHECK(steps == 3);

    SessionOptions vocab_only = demo_options();
    vocab_only.vocab_only = true;
    auto tok = Session::load(demo("tiny-llama-f32.gguf"), vocab_only);
    REQUIRE(tok.ok());
    CHECK((*tok)->context() == nullptr);
    CHECK((*tok)->facts().n_vocab == 32000);
    CHECK((*tok)->facts().n_params == 0);
    auto refused = generate(**tok, "Hello", options);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code == ErrorCode::E_VOCAB_ONLY);
}

TEST_CASE("a load failure carries llama.cpp's own message", "[infer]") {
    test::TempDir dir;
    std::vector<uint8_t> bytes = test::read_whole_file(demo("tiny-llama-f32.gguf"));
    bytes.resize(bytes.size() / 2);  // tensor data cut off
    test::write_whole_file(dir.file("cut.gguf"), bytes);
    auto log = std::make_shared<LogCapture>();
    auto cut = Session::load(dir.file("cut.gguf"), demo_options(), nullptr, log);
    REQUIRE_FALSE(cut.ok());
    CHECK(cut.error().code == ErrorCode::E_LLAMA_LOAD);
    CHECK_THAT(cut.error().message, Catch::StartsWith("llama.cpp could not load the model: "));
    CHECK_THAT(cut.error().message, Catch::Contains("not within the file bounds"));
    bool logged_error = false;
    for (const LlamaLogLine& line : log->lines()) logged_error |= line.level == LlamaLogLevel::error;
    CHECK(logged_error);

    auto missing = Session::load(dir.file("missing.gguf"), demo_options());
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == ErrorCode::E_LLAMA_LOAD);
    CHECK_THAT(missing.error().message, Catch::Contains("missing.gguf"));
}

TEST_CASE("a cancelled load stops with E_CANCELLED", "[infer]") {
    JobContext job;
    job.cancel();
    auto session = Session::load(demo("tiny-llama-f32.gguf"), demo_options(), &job);
    REQUIRE_FALSE(session.ok());
    CHECK(session.error().code == ErrorCode::E_CANCELLED);
}

TEST_CASE("log capture joins fragments into lines and keeps levels", "[infer]") {
    LogCapture log;
    log.append(LlamaLogLevel::info, false, "load: ");
    log.append(LlamaLogLevel::info, true, "done\nnext ");
    log.append(LlamaLogLevel::error, false, "line\n");
    log.append(LlamaLogLevel::error, false, "error: bad tensor\n");
    log.append(LlamaLogLevel::warn, false, "tail");
    log.flush();
    auto lines = log.lines();
    REQUIRE(lines.size() == 4);
    CHECK(lines[0].text == "load: done");
    CHECK(lines[0].level == LlamaLogLevel::info);
    CHECK(lines[1].text == "next line");
    CHECK(lines[1].level == LlamaLogLevel::info);
    CHECK(lines[2].text == "error: bad tensor");
    CHECK(lines[2].level == LlamaLogLevel::error);
    CHECK(lines[3].text == "tail");
    CHECK(lines[3].level == LlamaLogLevel::warn);
    CHECK(log.total() == 4);
    CHECK(log.lines_since(3).size() == 1);
    CHECK(log.problems_since(0) == "error: bad tensor");
    CHECK(log.problems_since(3) == "tail");
}

TEST_CASE("mlens --version names the git revision, the pinned llama.cpp release and the linked ggml", "[infer]") {
    const std::string v = llama_cpp_version();
    CHECK(v.starts_with("llama.cpp 0.5.0 \xC2\xB7 ggml "));
    CHECK(v.find(std::string("ggml ") + ggml_version() + " (" + ggml_commit() + ")") != std::string::npos);
    test::CliRun run = test::run_mlens({"--version"});
    CHECK(run.exit_status == 0);
    // The revision is the one mlens was built at, which a partial rebuild may leave older than ours.
    const std::string first_line = run.out.substr(0, run.out.find('\n'));
    CHECK(std::regex_match(first_line, std::regex(R"(mlens 0\.1\.0 \(git ([0-9a-f]{12}(\+dirty)?|unknown)\))")));
    CHECK(run.out.substr(first_line.size()) == "\n" + v + "\n");
    CHECK(std::regex_match(std::string(modellens_revision()), std::regex(R"([0-9a-f]{12}(\+dirty)?|unknown)")));
}
