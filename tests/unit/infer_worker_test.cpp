// llama.cpp in its worker process (worker_session.h): the same results as in process, and what
// happens when llama.cpp aborts, takes a SIGBUS, is cancelled, or is given a path it must not open.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "build_paths.h"
#include "cli_runner.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/layer_capture.h"
#include "mlens/infer/session.h"
#include "mlens/infer/threads.h"
#include "mlens/infer/worker_session.h"
#include "mlens/open/target.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
using Clock = std::chrono::steady_clock;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

SessionOptions two_threads() {
    SessionOptions o;
    o.n_threads = 2;
    o.n_ctx = 256;
    return o;
}

std::unique_ptr<WorkerSession> worker(const std::string& path, const SessionOptions& options = two_threads()) {
    auto w = WorkerSession::load(path, options);
    INFO((w ? std::string() : w.error().to_string()));
    REQUIRE(w.ok());
    return std::move(w).value();
}

// The upstream tiny llama3 (tiny_models.h) with one metadata value replaced.
std::string tiny_llama3_with(const test::TempDir& dir, const std::string& key, Value value) {
    test::TinyModel m = test::tiny_llama3(test::TinyLayout::upstream);
    bool found = false;
    for (MetadataEntry& e : m.metadata)
        if (e.key == key) {
            e.value = std::move(value);
            found = true;
        }
    REQUIRE(found);
    const std::string path = dir.file("model.gguf");
    test::write_tiny_model(m, path);
    return path;
}

Value f32_value(float v) { return Value::of_scalar(Scalar{ValueType::f32, std::bit_cast<uint32_t>(v)}); }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<int32_t> ids_of(const std::vector<GenerationStep>& steps) {
    std::vector<int32_t> ids;
    for (const GenerationStep& s : steps) ids.push_back(s.token);
    return ids;
}

}  // namespace

TEST_CASE("the worker gives exactly the in-process results", "[infer][worker]") {
    auto w = worker(demo("tiny-llama-f32.gguf"));
    auto local = Session::load(demo("tiny-llama-f32.gguf"), two_threads());
    REQUIRE(local.ok());
    Session& s = **local;
    CHECK(w->facts().n_vocab == s.facts().n_vocab);
    CHECK(w->facts().n_layer == 2);
    CHECK(w->facts().description == s.facts().description);
    CHECK(w->n_ctx() == s.n_ctx());
    CHECK(w->threads() == 2);
    CHECK(w->thread_note().empty());
    CHECK(w->pid() > 0);

    auto tokens = w->run<TokenizeOp>({"Hello world", {}});
    REQUIRE(tokens.ok());
    REQUIRE(tokens->size() == 3);
    CHECK((*tokens)[0].id == 1);
    CHECK((*tokens)[1].id == 15043);
    CHECK((*tokens)[1].piece == " Hello");
    auto text = w->run<DetokenizeOp>({{1, 15043, 3186}});
    REQUIRE(text.ok());
    CHECK(*text == "<s> Hello world");
    auto pieces = w->run<PiecesOp>({{3186}});
    REQUIRE(pieces.ok());
    CHECK((*pieces)[0].piece == " world");

    GenerateOptions g;
    g.max_tokens = 6;
    g.n_candidates = 3;
    std::vector<GenerationStep> streamed;
    auto generated = w->run<GenerateOp>({"Once upon a time", g}, nullptr, [&](const GenerationStream& batch) {
        streamed.insert(streamed.end(), batch.steps.begin(), batch.steps.end());
    });
    REQUIRE(generated.ok());
    const GenerationResult* remote = &generated->result;
    auto expected = generate(s, "Once upon a time", g);
    REQUIRE(expected.ok());
    CHECK(ids_of(remote->steps) == ids_of(expected->steps));
    CHECK(ids_of(streamed) == ids_of(expected->steps));
    CHECK(remote->prompt_tokens == expected->prompt_tokens);
    CHECK(remote->text == expected->text);
    REQUIRE(remote->steps[0].candidates.size() == 3);
    CHECK(remote->steps[0].candidates[1].id == expected->steps[0].candidates[1].id);
    CHECK(remote->steps[0].candidates[1].prob == expected->steps[0].candidates[1].prob);
    CHECK(remote->generation_decoded == 5);

    LayerCaptureOptions lo;
    lo.names = {"l_out"};
    auto layers = w->run<LayersOp>({"Hello", lo});
    auto local_layers = capture_layers(s, "Hello", lo);
    REQUIRE(layers.ok());
    REQUIRE(local_layers.ok());
    REQUIRE(layers->activations.size() == 2);
    CHECK(layers->activations[1].tensor == "l_out-1");
    CHECK(layers->activations[1].l2 == local_layers->activations[1].l2);
    CHECK(layers->activations[1].values == local_layers->activations[1].values);

    AbOptions ao;
    ao.max_tokens = 2;
    auto ab = w->run<AbOp>({demo("tiny-llama-f32.gguf"), "Hello there", ao});
    REQUIRE(ab.ok());
    CHECK(ab->result.summary.mean_kld == 0.0);
    CHECK(ab->result.summary.first_divergence == -1);
    CHECK(ab->tokens.size() == ab->result.tokens.size());
    CHECK(ab->top_a == ab->top_b);
    CHECK_FALSE(w->stopped().has_value());
}

TEST_CASE("a path that is not a regular file never reaches llama.cpp", "[infer][worker]") {
    test::TempDir dir;
    const std::string fifo = dir.file("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto started = Clock::now();
    auto loaded = WorkerSession::load(fifo, two_threads());
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code == ErrorCode::E_NOT_REGULAR);
    CHECK_THAT(loaded.error().message, Catch::Contains("a FIFO"));
    auto folder = WorkerSession::load(dir.path(), two_threads());
    REQUIRE_FALSE(folder.ok());
    CHECK_THAT(folder.error().message, Catch::Contains("a directory"));
    CHECK(WorkerSession::load(dir.file("missing.gguf"), two_threads()).error().code == ErrorCode::E_IO);

    for (const char* command : {"run", "layers"}) {
        test::CliRun r = test::run_mlens({command, fifo, "-p", "x"});
        CHECK(r.exit_status == 1);
        CHECK_THAT(r.err, Catch::Contains("not a regular file (a FIFO)"));
    }
    CHECK(test::run_mlens({"tokenize", fifo, "x"}).exit_status == 1);
    test::CliRun ab = test::run_mlens({"ab", demo("tiny-llama-f32.gguf"), fifo, "-p", "x"});
    CHECK(ab.exit_status == 1);
    CHECK_THAT(ab.err, Catch::Contains("not a regular file (a FIFO)"));
    CHECK(seconds_since(started) < 5.0);

    // A file that changed since it was examined (as a document opened it).
    const std::string copy = dir.file("copy.gguf");
    std::filesystem::copy_file(demo("tiny-llama-f32.gguf"), copy);
    auto identity = regular_file_identity(copy);
    REQUIRE(identity.ok());
    std::filesystem::resize_file(copy, identity->size - 1);
    auto changed = WorkerSession::load(copy, two_threads(), nullptr, nullptr, *identity);
    REQUIRE_FALSE(changed.ok());
    CHECK(changed.error().code == ErrorCode::E_FILE_CHANGED);
}

TEST_CASE("llama.cpp aborting on block_count 0 ends the worker, not the caller", "[infer][worker]") {
    test::TempDir dir;
    const std::string path = tiny_llama3_with(dir, "llama.block_count", Value::of_u32(0));
    auto log = std::make_shared<LogCapture>();
    auto loaded = WorkerSession::load(path, two_threads(), nullptr, log);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().code == ErrorCode::E_LLAMA_STOPPED);
    CHECK_THAT(loaded.error().message, Catch::StartsWith("llama.cpp stopped: SIGABRT"));
    CHECK_THAT(loaded.error().message,
               Catch::Contains("GGML_ASSERT(hparams.n_layer_all > 0 && hparams.n_layer_all <= LLAMA_MAX_LAYERS) failed"));
    bool assert_logged = false;
    for (const LlamaLogLine& line : log->lines())
        assert_logged |= line.level == LlamaLogLevel::error && line.text.find("GGML_ASSERT") != std::string::npos;
    CHECK(assert_logged);

    test::CliRun run = test::run_mlens({"run", path, "-p", "Hello"});
    CHECK(run.exit_status == 1);
    CHECK_THAT(run.err, Catch::Contains("error: ") && Catch::Contains("llama.cpp stopped: SIGABRT"));

    // `mlens check` accepts the file and names the key llama.cpp asserts on.
    test::CliRun check = test::run_mlens({"check", path});
    CHECK(check.exit_status == 0);
    CHECK_THAT(check.err, Catch::Contains("warning: GGUF W_LLAMA_ABORT llama.block_count offset="));
}

TEST_CASE("a negative norm epsilon loads, then stops the worker at the first decode", "[infer][worker]") {
    test::TempDir dir;
    const std::string path = tiny_llama3_with(dir, "llama.attention.layer_norm_rms_epsilon", f32_value(-1.0f));
    auto w = worker(path);
    GenerateOptions g;
    g.max_tokens = 2;
    auto result = w->run<GenerateOp>({"Hello", g});
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::E_LLAMA_STOPPED);
    CHECK_THAT(result.error().message, Catch::Contains("SIGABRT") && Catch::Contains("GGML_ASSERT(eps >= 0.0f) failed"));
    REQUIRE(w->stopped().has_value());
    CHECK(w->pid() == -1);
    // Every later call gives the same answer without a worker.
    auto again = w->run<TokenizeOp>({"Hello", {}});
    REQUIRE_FALSE(again.ok());
    CHECK(again.error().message == result.error().message);

    auto model = open_model(path);
    REQUIRE(model.ok());
    bool warned = false;
    for (const Diagnostic& d : model->diagnostics)
        warned |= d.code == ErrorCode::W_LLAMA_ABORT && d.field == "llama.attention.layer_norm_rms_epsilon";
    CHECK(warned);
}

TEST_CASE("truncating the model while it generates stops the worker with SIGBUS", "[infer][worker]") {
    test::TempDir dir;
    const std::string path = dir.file("model.gguf");
    std::filesystem::copy_file(demo("tiny-llama-f32.gguf"), path);
    SessionOptions o = two_threads();
    o.n_threads = 1;
    o.n_ctx = 2048;
    auto w = worker(path, o);
    GenerateOptions g;
    g.max_tokens = 2000;
    g.stop_at_eog = false;
    size_t steps = 0;
    auto result = w->run<GenerateOp>({"Once upon a time", g}, nullptr, [&](const GenerationStream& batch) {
        for (size_t i = 0; i < batch.steps.size(); ++i)
            if (++steps == 3) std::filesystem::resize_file(path, 1000);
    });
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::E_LLAMA_STOPPED);
    CHECK_THAT(result.error().message, Catch::StartsWith("llama.cpp stopped: SIGBUS"));
    CHECK(steps >= 3);
    CHECK(steps < 2000);
}

TEST_CASE("an escape sequence from the file reaches the terminal escaped", "[infer][worker]") {
    test::TempDir dir;
    const std::string path = tiny_llama3_with(dir, "general.architecture", Value::of_string("\x1b[2Jllama"));
    for (bool log : {false, true}) {
        std::vector<std::string> args{"run", path, "-p", "Hello"};
        if (log) args.push_back("--log");
        test::CliRun r = test::run_mlens(args);
        CHECK(r.exit_status == 1);
        CHECK(r.err.find('\x1b') == std::string::npos);
        CHECK(r.out.find('\x1b') == std::string::npos);
        CHECK_THAT(r.err, Catch::Contains("unknown model architecture: '\\x1B[2Jllama'"));
    }
}

TEST_CASE("cancel stops a generation in the worker and keeps the model loaded", "[infer][worker]") {
    auto w = worker(demo("tiny-llama-f32.gguf"));
    JobContext job;
    GenerateOptions g;
    g.max_tokens = 200;
    g.stop_at_eog = false;
    size_t steps = 0;
    auto result = w->run<GenerateOp>({"Once upon a time", g}, &job, [&](const GenerationStream& batch) {
        for (size_t i = 0; i < batch.steps.size(); ++i)
            if (++steps == 2) job.cancel();
    });
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == ErrorCode::E_CANCELLED);
    CHECK(steps < 200);
    CHECK_FALSE(w->stopped().has_value());
    auto tokens = w->run<TokenizeOp>({"Hello world", {}});
    REQUIRE(tokens.ok());
    CHECK(tokens->size() == 3);
}

TEST_CASE("thread counts: validated, capped to the online cores, a default that fits the load", "[infer][worker]") {
    const int cores = online_cores();
    CHECK(cores >= 1);
    ThreadChoice one = choose_threads(1);
    CHECK(one.threads == 1);
    CHECK(one.note.empty());
    ThreadChoice many = choose_threads(1000);
    CHECK(many.threads == cores);
    CHECK(many.note == "--threads 1000 capped to the " + std::to_string(cores) + " online core" + (cores == 1 ? "" : "s"));
    ThreadChoice fallback = choose_threads(0);
    CHECK(fallback.threads >= 1);
    CHECK(fallback.threads <= cores);
    CHECK_THAT(fallback.note, Catch::Contains("(default: " + std::to_string(cores) + " core"));

    for (const char* bad : {"0", "-3"}) {
        test::CliRun r = test::run_mlens({"run", demo("tiny-llama-f32.gguf"), "-p", "x", "--threads", bad});
        CHECK(r.exit_status == 2);
    }
    test::CliRun capped = test::run_mlens({"run", demo("tiny-llama-f32.gguf"), "-p", "x", "-n", "1", "--threads", "1000"});
    CHECK(capped.exit_status == 0);
    CHECK_THAT(capped.err, Catch::Contains("note: --threads 1000 capped to the " + std::to_string(cores) + " online core"));
}

TEST_CASE("prompts from a file or standard input, with a size limit", "[infer][worker][cli]") {
    test::TempDir dir;
    const std::string model = demo("tiny-llama-f32.gguf");
    const std::string prompt = "Once upon a time";
    const std::string file = dir.file("prompt.txt");
    test::write_whole_file(file, std::vector<uint8_t>(prompt.begin(), prompt.end()));
    auto tokens_of = [](const test::CliRun& r) {
        INFO(r.err);
        REQUIRE(r.exit_status == 0);
        return nlohmann::json::parse(r.out)["prompt_tokens"];
    };
    const auto direct = tokens_of(test::run_mlens({"run", model, "-p", prompt, "-n", "1", "--json"}));
    CHECK(direct.size() == 5);
    CHECK(tokens_of(test::run_mlens({"run", model, "--prompt-file", file, "-n", "1", "--json"})) == direct);
    CHECK(tokens_of(test::run_mlens({"run", model, "-p", "-", "-n", "1", "--json"}, prompt)) == direct);

    test::CliRun tokenized = test::run_mlens({"tokenize", model, "-", "--json"}, prompt);
    REQUIRE(tokenized.exit_status == 0);
    CHECK(nlohmann::json::parse(tokenized.out)["count"] == 5);
    test::CliRun no_text = test::run_mlens({"tokenize", model, "--json"}, prompt);
    REQUIRE(no_text.exit_status == 0);
    CHECK(nlohmann::json::parse(no_text.out)["count"] == 5);
    CHECK(nlohmann::json::parse(test::run_mlens({"tokenize", model, "--prompt-file", file, "--json"}).out)["count"] == 5);
    test::CliRun layers = test::run_mlens({"layers", model, "--prompt-file", file, "--names", "l_out", "--json"});
    REQUIRE(layers.exit_status == 0);
    CHECK(nlohmann::json::parse(layers.out)["tokens"] == direct);
    test::CliRun ab = test::run_mlens({"ab", model, model, "--prompt-file", file, "-n", "1", "--json"});
    REQUIRE(ab.exit_status == 0);
    CHECK(nlohmann::json::parse(ab.out)["n_prompt"] == 5);

    const std::string big = dir.file("big.txt");
    test::write_whole_file(big, std::vector<uint8_t>((1u << 20) + 1, 'a'));
    test::CliRun too_big = test::run_mlens({"run", model, "--prompt-file", big});
    CHECK(too_big.exit_status == 1);
    CHECK_THAT(too_big.err, Catch::Contains("is 1048577 bytes; a prompt is limited to 1 MiB (1048576 bytes)"));
    test::CliRun too_big_stdin = test::run_mlens({"run", model, "-p", "-"}, std::string((1u << 20) + 1, 'a'));
    CHECK(too_big_stdin.exit_status == 1);
    CHECK_THAT(too_big_stdin.err, Catch::Contains("standard input holds more than 1 MiB (1048576 bytes)"));
    const std::string fifo = dir.file("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    test::CliRun from_fifo = test::run_mlens({"run", model, "--prompt-file", fifo});
    CHECK(from_fifo.exit_status == 1);
    CHECK_THAT(from_fifo.err, Catch::Contains("is not a regular file"));
    CHECK(test::run_mlens({"run", model, "-p", "x", "--prompt-file", file}).exit_status == 2);
    CHECK(test::run_mlens({"run", model}).exit_status == 2);
}
