#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <imgui.h>

#include "build_paths.h"
#include "app_shell.h"
#include "corpus_text.h"
#include "headless.h"
#include "mlens/infer/corpus_kld.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/layer_divergence.h"
#include "mlens/infer/dry_run.h"
#include "mlens/infer/memory_plan.h"
#include "mlens/infer/session.h"
#include "mlens/infer/template_lab.h"
#include "mlens/infer/tokenizer.h"
#include "mlens/open/target.h"
#include "panels/inference_panel.h"
#include "state/inference_controller.h"
#include "state/workspace.h"
#include "tiny_models.h"
#include "workspace_harness.h"

using namespace mlens;
using mlens::test::HeadlessImGui;
using mlens::test::TempDir;

namespace {

std::string demo(const char* name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

std::unique_ptr<Session> core_session(const std::string& path, bool vocab_only = false, int threads = 0) {
    SessionOptions options;
    options.vocab_only = vocab_only;
    options.n_threads = threads;
    auto session = Session::load(path, options);
    REQUIRE(session.ok());
    return std::move(session).value();
}

// A workspace with `paths` open and the Inference panel of the first document.
struct InferHarness : test::WorkspaceHarness {
    std::vector<Document*> docs;
    InferencePanel panel;

    explicit InferHarness(const std::vector<std::string>& paths) { docs = open_all(paths); }
    Document& doc() { return *docs.front(); }
    InferenceController& controller() {
        REQUIRE(panel.controller() != nullptr);
        return *panel.controller();
    }
    PanelContext context() { return context_of(doc()); }
    void frame() {
        PanelContext ctx = context();
        imgui.window_frame("inference", 1200, 900, [&] { panel.draw(ctx); });
    }
    // Frames until no job runs and no request waits (a request may need a load, then its own job).
    void settle() {
        frames_until_jobs_done(6, [this] { frame(); });
        REQUIRE_FALSE(controller().busy());
    }
    // Draws every sub-tab for a few frames.
    void every_tab() {
        for (InferenceTab t : {InferenceTab::tokenizer, InferenceTab::generate, InferenceTab::layers, InferenceTab::ab,
                               InferenceTab::corpus, InferenceTab::divergence, InferenceTab::memory, InferenceTab::template_lab,
                               InferenceTab::console}) {
            panel.show(t);
            frame();
            frame();
        }
    }
};

std::vector<int32_t> ids_of(const std::vector<TokenPiece>& tokens) {
    std::vector<int32_t> ids;
    for (const TokenPiece& t : tokens) ids.push_back(t.id);
    return ids;
}

std::vector<int32_t> ids_of(const std::vector<GenerationStep>& steps) {
    std::vector<int32_t> ids;
    for (const GenerationStep& s : steps) ids.push_back(s.token);
    return ids;
}

void copy_prefix(const std::string& from, const std::string& to, double fraction) {
    std::ifstream in(from, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.resize(static_cast<size_t>(static_cast<double>(bytes.size()) * fraction));
    std::ofstream out(to, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("the inference panel draws every tab before anything is loaded", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-f32.gguf")});
    h.every_tab();
    CHECK_FALSE(h.controller().loaded());
    CHECK_FALSE(h.controller().busy());
    CHECK(h.controller().tokenize("hi", {}).error().code == ErrorCode::E_NOT_LOADED);
    CHECK(inference_tab_named("ab") == InferenceTab::ab);
    CHECK_FALSE(inference_tab_named("nope"));
    auto corpus = parse_inference_request("corpus:/data/text.txt");
    REQUIRE(corpus.has_value());
    CHECK(corpus->tab == InferenceTab::corpus);
    CHECK(corpus->argument == "/data/text.txt");
    CHECK(parse_inference_request("memory")->tab == InferenceTab::memory);
    CHECK(parse_inference_request("divergence")->argument.empty());
    CHECK_FALSE(parse_inference_request("ab:/data/text.txt"));
    CHECK_FALSE(parse_inference_request("corpus:"));
}

TEST_CASE("the tokenizer tab gives llama.cpp's ids and round trip", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-f32.gguf")});
    h.panel.request(InferenceTab::tokenizer);  // loads the vocabulary only
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE(c.loaded());
    REQUIRE(c.facts() != nullptr);
    CHECK(c.facts()->vocab_only);
    CHECK(c.facts()->n_vocab == 32000);
    CHECK_FALSE(c.can_decode());
    CHECK(c.load_banner().empty());
    CHECK(c.log().total() > 0);

    auto core = core_session(demo("tiny-llama-f32.gguf"), true);
    for (bool add_special : {true, false}) {
        for (bool parse_special : {true, false}) {
            InferenceTokenizerView& view = h.panel.tokenizer_view();
            view.text = "Hello world!\n\t<s> caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC";
            view.options = {add_special, parse_special};
            view.run(c);
            h.frame();
            REQUIRE(view.result().has_value());
            REQUIRE(view.result()->ok());
            auto expected = tokenize_ids(*core, view.text, view.options);
            REQUIRE(expected.ok());
            CHECK(ids_of((*view.result())->tokens) == *expected);
            auto round_trip = detokenize(*core, *expected, false, true);
            REQUIRE(round_trip.ok());
            CHECK((*view.result())->round_trip == *round_trip);
        }
    }
    // The demo model has no chat template: llama.cpp's refusal is shown, nothing crashes.
    REQUIRE(h.panel.tokenizer_view().chat().has_value());
    CHECK(h.panel.tokenizer_view().chat()->error().code == ErrorCode::E_NO_TEMPLATE);
    // Decoding is refused on a vocabulary-only session.
    PanelContext ctx = h.context();
    CHECK_FALSE(h.panel.generate_view().run(ctx, c));
    h.every_tab();
}

TEST_CASE("the chat template is rendered by llama.cpp and tokenized", "[gui-infer]") {
    const std::string path = std::string(MLENS_LLAMA_SOURCE) + "/models/ggml-vocab-qwen2.gguf";
    InferHarness h({path});
    h.panel.request(InferenceTab::tokenizer);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE(c.loaded());
    CHECK(c.facts()->has_chat_template);
    const auto& chat = h.panel.tokenizer_view().chat();
    REQUIRE(chat.has_value());
    REQUIRE(chat->ok());
    CHECK_THAT((*chat)->prompt, Catch::Contains("<|im_start|>user"));
    auto core = core_session(path, true);
    auto expected = apply_chat_template(*core, sample_conversation());
    REQUIRE(expected.ok());
    CHECK((*chat)->prompt == expected->prompt);
    CHECK(ids_of((*chat)->tokens) == ids_of(expected->tokens));
    h.every_tab();
}

TEST_CASE("the Template tab shows the template lab's one answer, against another open model", "[gui-infer][template]") {
    const std::string qwen = demo("ollama-qwen25vl.gguf");
    const std::string store_model = demo("ollama-store") + "/tiny-llama:q4_0";
    InferHarness h({qwen, store_model});
    CHECK(parse_inference_request("template")->tab == InferenceTab::template_lab);
    auto linked = parse_inference_request("template:tiny-llama:q4_0");
    REQUIRE(linked.has_value());
    CHECK(linked->argument == "tiny-llama:q4_0");
    h.panel.show(InferenceTab::template_lab);
    h.panel.template_view().against_document = h.docs[1]->id;
    PanelContext ctx = h.context();
    REQUIRE(h.panel.template_view().run(ctx));
    h.frames_until_jobs_done(2, [&] { h.frame(); });
    const auto& result = h.panel.template_view().result();
    REQUIRE(result.has_value());
    REQUIRE(result->ok());
    TemplateLabRequest request;
    request.model = qwen;
    request.against = store_model;
    auto expected = run_template_lab(request);
    REQUIRE(expected.ok());
    REQUIRE((*result)->renderings.size() == expected->renderings.size());
    for (size_t i = 0; i < expected->renderings.size(); ++i) {
        CHECK((*result)->renderings[i].prompt == expected->renderings[i].prompt);
        CHECK(ids_of((*result)->renderings[i].tokens) == ids_of(expected->renderings[i].tokens));
    }
    CHECK((*result)->warnings.size() == expected->warnings.size());
    // A messages file that is not a conversation is refused before anything runs.
    TempDir dir;
    const std::string bad = dir.file("messages.json");
    std::ofstream(bad) << "{\"messages\": 3}";
    h.panel.template_view().messages_path = bad;
    CHECK_FALSE(h.panel.template_view().run(ctx));
    h.every_tab();
}

TEST_CASE("greedy generation in the panel gives core generate's tokens", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-f32.gguf")});
    InferenceGenerateView& view = h.panel.generate_view();
    view.prompt = "Once upon a time";
    view.options.max_tokens = 6;
    h.panel.request(InferenceTab::generate);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE(c.can_decode());
    CHECK(c.facts()->n_layer == 2);
    CHECK(c.facts()->n_embd == 64);
    REQUIRE_FALSE((error_of(c.latest<GenerateOp>()) != nullptr));
    REQUIRE((outcome_of(c.latest<GenerateOp>()) != nullptr));
    const GenerationResult& r = outcome_of(c.latest<GenerateOp>())->result;

    auto core = core_session(demo("tiny-llama-f32.gguf"));
    GenerateOptions options;
    options.max_tokens = 6;
    auto expected = generate(*core, "Once upon a time", options);
    REQUIRE(expected.ok());
    CHECK(r.prompt_tokens == expected->prompt_tokens);
    CHECK(ids_of(r.steps) == ids_of(expected->steps));
    CHECK(ids_of(c.stream<GenerateOp>().steps) == ids_of(expected->steps));
    CHECK(ids_of(c.stream<GenerateOp>().prompt) == expected->prompt_tokens);
    REQUIRE(r.steps.size() == 6);
    for (const GenerationStep& s : r.steps) CHECK(s.candidates.size() == 5);
    CHECK(r.prompt_tokens_per_s > 0);
    CHECK(r.generation_tokens_per_s > 0);
    h.every_tab();

    // Sampling with a seed gives the core's sampled tokens too.
    view.sample = true;
    view.temperature = 0.9f;
    view.options.sampling.seed = 7;
    PanelContext ctx = h.context();
    REQUIRE(view.run(ctx, c));
    h.settle();
    REQUIRE((outcome_of(c.latest<GenerateOp>()) != nullptr));
    options.sampling = view.options.sampling;
    options.sampling.temperature = 0.9f;
    auto sampled = generate(*core, "Once upon a time", options);
    REQUIRE(sampled.ok());
    CHECK(ids_of(outcome_of(c.latest<GenerateOp>())->result.steps) == ids_of(sampled->steps));
}

TEST_CASE("generation streams its steps, Stop keeps them, and the session takes one job at a time", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-f32.gguf")});
    h.panel.request(InferenceTab::console);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE(c.can_decode());
    GenerateOptions options;
    // Up to the context's end: long enough for the cancel to arrive while the worker still decodes.
    options.max_tokens = 100000;
    options.stop_at_eog = false;
    REQUIRE(c.start<GenerateOp>(h.jobs, {"Once upon a time", options}));
    CHECK(c.running<GenerateOp>());
    // One thread at a time: nothing else starts and the main-thread tokenizer refuses.
    CHECK_FALSE(c.start<LayersOp>(h.jobs, {"x", {}}));
    CHECK_FALSE(c.start<GenerateOp>(h.jobs, {"x", options}));
    CHECK_FALSE(c.start_load(h.jobs, {}));
    CHECK(c.tokenize("x", {}).error().code == ErrorCode::E_BUSY);
    while (c.stream<GenerateOp>().steps.empty() && c.busy()) {
        h.frame();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE_FALSE(c.stream<GenerateOp>().steps.empty());
    c.cancel();
    h.jobs.wait_all();
    h.frame();
    CHECK_FALSE(c.busy());
    REQUIRE((error_of(c.latest<GenerateOp>()) != nullptr));
    CHECK(error_of(c.latest<GenerateOp>())->code == ErrorCode::E_CANCELLED);
    CHECK_FALSE((outcome_of(c.latest<GenerateOp>()) != nullptr));
    CHECK(c.stream<GenerateOp>().steps.size() >= 1);
    CHECK(c.stream<GenerateOp>().steps.size() < c.n_ctx());
    CHECK(c.stream<GenerateOp>().prompt.size() == 5);
    h.every_tab();
}

TEST_CASE("the layers tab captures activations and histograms a row", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-f32.gguf")});
    h.panel.request(InferenceTab::layers);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE_FALSE((error_of(c.latest<LayersOp>()) != nullptr));
    REQUIRE((outcome_of(c.latest<LayersOp>()) != nullptr));
    const LayerCaptureResult& r = *outcome_of(c.latest<LayersOp>());
    REQUIRE(r.activations.size() == 10);  // 2 layers × 5 names
    CHECK(r.activations[0].tensor == "attn_norm-0");
    CHECK(r.activations[0].count == 64);
    CHECK(r.capture_ms > 0);
    CHECK(r.plain_ms > 0);
    InferenceLayersView& view = h.panel.layers_view();
    CHECK(view.selected() == 9u);  // a new capture shows its last activation
    view.select(r, 4);
    h.frame();
    CHECK(view.selected() == 4u);
    REQUIRE(view.histogram().size() == 1);
    const HistogramSeries& s = view.histogram().front();
    CHECK(s.counts.size() == 64);
    CHECK(s.share_total() == r.activations[4].count);
    CHECK(s.lo == Approx(r.activations[4].min));
    CHECK(s.hi == Approx(r.activations[4].max));
    // A new capture replaces the selection with its own last activation.
    PanelContext ctx = h.context();
    REQUIRE(view.run(ctx, c));
    h.settle();
    CHECK(view.selected() == 9u);
    CHECK(view.histogram().front().share_total() == 64);
}

TEST_CASE("A/B of a model with itself has KLD 0; against q4_0 it diverges", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-f32.gguf"), demo("tiny-llama-q4_0.gguf")});
    InferenceAbView& view = h.panel.ab_view();
    view.options.max_tokens = 4;
    view.b_document = h.doc().id;
    h.panel.request(InferenceTab::ab);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE_FALSE((error_of(c.latest<AbOp>()) != nullptr));
    REQUIRE((outcome_of(c.latest<AbOp>()) != nullptr));
    const AbOp::Outcome& same = *outcome_of(c.latest<AbOp>());
    CHECK(same.b_model == h.doc().path);
    CHECK(same.result.summary.max_kld == 0.0);
    CHECK(same.result.summary.mean_kld == 0.0);
    CHECK(same.result.summary.first_divergence == -1);
    CHECK(same.result.summary.same_top_share == 1.0);
    CHECK(same.tokens.size() == same.result.tokens.size());
    CHECK(same.top_a.size() == same.result.positions.size());
    h.every_tab();

    view.b_document = h.docs[1]->id;
    h.panel.request(InferenceTab::ab);
    h.settle();
    REQUIRE((outcome_of(c.latest<AbOp>()) != nullptr));
    CHECK(outcome_of(c.latest<AbOp>())->b_model == h.docs[1]->path);
    CHECK(outcome_of(c.latest<AbOp>())->result.summary.max_kld > 0.0);
    h.every_tab();
}

TEST_CASE("A/B with another vocabulary says so", "[gui-infer]") {
    // The Ollama-format gemma3 demo has a synthetic 320-token vocabulary.
    InferHarness h({demo("tiny-llama-f32.gguf"), demo("ollama-gemma3.gguf")});
    h.panel.ab_view().options.max_tokens = 2;
    h.panel.request(InferenceTab::ab);  // picks the other document as B
    h.settle();
    InferenceController& c = h.controller();
    CHECK(h.panel.ab_view().b_document == h.docs[1]->id);
    REQUIRE((error_of(c.latest<AbOp>()) != nullptr));
    INFO(error_of(c.latest<AbOp>())->message);
    CHECK(error_of(c.latest<AbOp>())->code == ErrorCode::E_VOCAB_MISMATCH);
    CHECK_FALSE((outcome_of(c.latest<AbOp>()) != nullptr));
    h.every_tab();
}

TEST_CASE("an Ollama-made GGUF loads through the upstream export with a banner", "[gui-infer]") {
    InferHarness h({demo("ollama-gemma3.gguf")});
    h.panel.generate_view().options.max_tokens = 2;
    h.panel.request(InferenceTab::generate);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE_FALSE(c.load_error().has_value());
    REQUIRE(c.loaded());
    CHECK_THAT(c.load_banner(), Catch::Contains("upstream export"));
    REQUIRE((outcome_of(c.latest<GenerateOp>()) != nullptr));
    CHECK(outcome_of(c.latest<GenerateOp>())->result.steps.size() == 2);
    h.every_tab();
}

TEST_CASE("Load as is hands an Ollama-made GGUF to llama.cpp unmodified", "[gui-infer]") {
    InferHarness h({demo("ollama-gemma3.gguf")});
    h.panel.load_as_is = true;
    h.panel.request(InferenceTab::generate);
    h.settle();
    InferenceController& c = h.controller();
    CHECK_FALSE(c.loaded());
    CHECK(c.load_banner().empty());
    REQUIRE(c.load_error().has_value());
    CHECK(c.load_error()->code == ErrorCode::E_LLAMA_LOAD);
    CHECK_THAT(c.load_error()->message, Catch::Contains("key not found in model: gemma3.attention.layer_norm_rms_epsilon"));
    h.every_tab();
}

TEST_CASE("a file llama.cpp cannot load shows its error and the panel keeps drawing", "[gui-infer]") {
    TempDir dir;
    copy_prefix(demo("tiny-llama-f32.gguf"), dir.file("cut.gguf"), 0.5);
    InferHarness h({dir.file("cut.gguf")});
    h.panel.request(InferenceTab::generate);
    h.settle();
    InferenceController& c = h.controller();
    CHECK_FALSE(c.loaded());
    REQUIRE(c.load_error().has_value());
    CHECK(c.load_error()->code == ErrorCode::E_LLAMA_LOAD);
    CHECK_THAT(c.load_error()->message, Catch::Contains("not within the file bounds"));
    bool logged_error = false;
    for (const LlamaLogLine& line : c.log().lines()) logged_error |= line.level == LlamaLogLevel::error;
    CHECK(logged_error);
    h.every_tab();
    // The request ended with the failed load: no retry loop.
    CHECK_FALSE(c.busy());
}

TEST_CASE("llama.cpp aborting in its worker leaves every document open and says why", "[gui-infer]") {
    TempDir dir;
    test::TinyModel model = test::tiny_llama3(test::TinyLayout::upstream);
    for (MetadataEntry& e : model.metadata)
        if (e.key == "llama.block_count") e.value = Value::of_u32(0);
    test::write_tiny_model(model, dir.file("blocks0.gguf"));
    InferHarness h({dir.file("blocks0.gguf"), demo("tiny-llama-f32.gguf")});
    h.panel.request(InferenceTab::generate);
    h.settle();
    InferenceController& c = h.controller();
    CHECK_FALSE(c.loaded());
    REQUIRE(c.stopped().has_value());
    CHECK_THAT(c.stopped()->message, Catch::StartsWith("llama.cpp stopped: SIGABRT"));
    CHECK_THAT(c.stopped()->message, Catch::Contains("GGML_ASSERT(hparams.n_layer_all > 0"));
    REQUIRE(c.load_error().has_value());
    CHECK(c.load_error()->code == ErrorCode::E_LLAMA_STOPPED);
    CHECK(h.workspace.documents().size() == 2);
    for (const auto& doc : h.workspace.documents()) CHECK(doc->ready());
    h.every_tab();
    CHECK_FALSE(c.busy());
    // Reload starts a new worker, which stops the same way; the panel keeps drawing.
    REQUIRE(c.start_load(h.jobs, {}));
    CHECK_FALSE(c.stopped().has_value());
    h.settle();
    REQUIRE(c.stopped().has_value());
    CHECK_THAT(c.stopped()->message, Catch::StartsWith("llama.cpp stopped: SIGABRT"));
    h.every_tab();
}

TEST_CASE("the thread count of the panel reaches llama.cpp", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-f32.gguf")});
    h.panel.threads = 1;
    h.panel.request(InferenceTab::console);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE(c.loaded());
    CHECK(c.threads() == 1);
    CHECK(c.thread_note().empty());
}

TEST_CASE("--select infer:VIEW reaches the inference panel through the shell", "[gui-infer]") {
    HeadlessImGui imgui;
    Settings settings;
    JobRunner jobs;
    ShellOptions options;
    options.start_select = "infer:console";
    AppShell shell(settings, jobs, imgui.fonts(), options);
    shell.open(demo("tiny-llama-f32.gguf"));
    for (int i = 0; i < 8; ++i) {
        imgui.frame([&] { shell.frame(); });
        jobs.wait_all();
    }
    Document* doc = shell.workspace().active();
    REQUIRE(doc != nullptr);
    REQUIRE(doc->ready());
    // The panel took the request (and loaded the model for it).
    CHECK(doc->focus_panel.empty());
}

TEST_CASE("the corpus view scores a text as core corpus_kld does and shows the tokens at a position", "[gui-infer]") {
    TempDir dir;
    const std::string text_path = dir.file("text.txt");
    const std::string text = test::corpus_text(1800);
    std::ofstream(text_path, std::ios::binary) << text;
    InferHarness h({demo("tiny-llama-f32.gguf"), demo("tiny-llama-q4_0.gguf")});
    h.panel.threads = 1;  // the same threads as the reference below: the same logits
    h.panel.ab_view().b_document = h.docs[1]->id;
    InferenceCorpusView& view = h.panel.corpus_view();
    view.options.n_ctx = 128;
    view.options.max_chunks = 4;
    REQUIRE(h.panel.accept_link("infer:corpus:" + text_path, h.doc()));
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE_FALSE((error_of(c.latest<KldOp>()) != nullptr));
    REQUIRE((outcome_of(c.latest<KldOp>()) != nullptr));
    const KldOp::Outcome& k = *outcome_of(c.latest<KldOp>());
    CHECK(view.text_path == text_path);
    CHECK(k.b_model == h.docs[1]->path);
    CHECK(k.result.n_chunk == 4);
    CHECK(k.moments.count == 4u * (128 - 1 - 64));

    auto a = core_session(demo("tiny-llama-f32.gguf"), false, 1);
    auto b = core_session(demo("tiny-llama-q4_0.gguf"), false, 1);
    KldOptions options;
    options.n_ctx = 128;
    options.max_chunks = 4;
    auto reference = corpus_kld(a.get(), *b, text, options);
    REQUIRE(reference.ok());
    CHECK(k.result.tokens == reference->tokens);
    CHECK(k.result.kld == reference->kld);
    CHECK(k.result.top_a == reference->top_a);
    CHECK(k.result.top_b == reference->top_b);
    CHECK(k.moments.same_top_count == reference->total.same_top);
    CHECK(k.moments.kld_mean == Approx(kld_moments(reference->total).kld_mean).epsilon(1e-12));
    CHECK(k.kld_order.max == kld_order(reference->kld).max);

    // Every scored position is in the histogram once.
    h.panel.show(InferenceTab::corpus);
    h.frame();
    REQUIRE(view.histogram().size() == 1);
    uint64_t binned = view.histogram()[0].below + view.histogram()[0].above;
    for (uint64_t n : view.histogram()[0].counts) binned += n;
    CHECK(binned == k.moments.count);

    // A new result shows its most divergent position: the tokens up to it and the one that follows.
    const auto peak = static_cast<size_t>(std::max_element(k.result.kld.begin(), k.result.kld.end()) - k.result.kld.begin());
    REQUIRE(view.selected() == peak);
    const size_t chunk = peak / 63, position = 64 + peak % 63;
    REQUIRE(view.window().size() == 25);
    CHECK(view.window().back().id == k.result.tokens[chunk * 128 + position + 1]);
    CHECK(view.window()[23].id == k.result.tokens[chunk * 128 + position]);
    // "Compare in A/B" runs the pair on the window's text: its last position is after the selected token.
    const int32_t selected_token = view.window()[23].id;
    view.compare_in_ab();
    h.settle();
    REQUIRE((outcome_of(c.latest<AbOp>()) != nullptr));
    CHECK(outcome_of(c.latest<AbOp>())->b_model == h.docs[1]->path);
    CHECK(h.panel.ab_view().prompt.size() > 20);
    REQUIRE_FALSE(outcome_of(c.latest<AbOp>())->result.tokens.empty());
    CHECK(outcome_of(c.latest<AbOp>())->result.tokens.back() == selected_token);

    view.select(c, 0);
    CHECK(view.window().size() == 24 + 1);
    CHECK(view.window().front().id == k.result.tokens[64 - 23]);
    h.every_tab();
}

TEST_CASE("the divergence view is exactly zero for a model against itself and core's figures against q4_0", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-f32.gguf"), demo("tiny-llama-q4_0.gguf")});
    h.panel.threads = 1;
    h.panel.ab_view().b_document = h.doc().id;
    h.panel.request(InferenceTab::divergence);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE_FALSE((error_of(c.latest<DivergenceOp>()) != nullptr));
    REQUIRE((outcome_of(c.latest<DivergenceOp>()) != nullptr));
    const LayerDivergenceResult& same = outcome_of(c.latest<DivergenceOp>())->result;
    REQUIRE(same.rows.size() == 6);  // attn_out, ffn_out, l_out of 2 layers
    for (const LayerDivergenceRow& row : same.rows) {
        CHECK(row.rel_error == 0.0);
        CHECK(row.cosine == 1.0);
    }
    CHECK(same.jump_layer == -1);

    h.panel.ab_view().b_document = h.docs[1]->id;
    h.panel.request(InferenceTab::divergence);
    h.settle();
    REQUIRE((outcome_of(c.latest<DivergenceOp>()) != nullptr));
    const LayerDivergenceResult& q4 = outcome_of(c.latest<DivergenceOp>())->result;
    CHECK(outcome_of(c.latest<DivergenceOp>())->b_model == h.docs[1]->path);
    auto a = core_session(demo("tiny-llama-f32.gguf"), false, 1);
    auto b = core_session(demo("tiny-llama-q4_0.gguf"), false, 1);
    auto reference = layer_divergence(*a, *b, h.panel.divergence_view().prompt, LayerDivergenceOptions{});
    REQUIRE(reference.ok());
    CHECK(q4.tokens == reference->tokens);
    REQUIRE(q4.rows.size() == reference->rows.size());
    for (size_t i = 0; i < q4.rows.size(); ++i) {
        INFO(q4.rows[i].tensor);
        CHECK(q4.rows[i].tensor == reference->rows[i].tensor);
        CHECK(q4.rows[i].rel_error == reference->rows[i].rel_error);
        CHECK(q4.rows[i].cosine == reference->rows[i].cosine);
        CHECK(q4.rows[i].rel_error > 0.0);
    }
    CHECK(q4.jump_layer == reference->jump_layer);
    h.every_tab();
}

TEST_CASE("the memory view sets the estimate beside llama.cpp's buffers with the KV term exact", "[gui-infer]") {
    InferHarness h({demo("tiny-llama-q4_0.gguf")});
    InferenceMemoryView& view = h.panel.memory_view();
    view.options.n_ctx = 300;  // padded to 512 cells
    view.options.kv_type = "f32";  // the demo heads (16 values) are too short for 32-value quantized blocks
    h.panel.request(InferenceTab::memory);
    h.settle();
    InferenceController& c = h.controller();
    REQUIRE_FALSE((error_of(c.latest<MemoryOp>()) != nullptr));
    REQUIRE((outcome_of(c.latest<MemoryOp>()) != nullptr));
    REQUIRE(view.estimate().has_value());
    REQUIRE(view.estimate()->ok());
    const MemoryEstimate& est = view.estimate()->value();
    const MemoryMeasure& measured = *outcome_of(c.latest<MemoryOp>());

    auto model = open_model(demo("tiny-llama-q4_0.gguf"));
    REQUIRE(model.ok());
    auto reference_estimate = estimate_memory(*model, view.options);
    REQUIRE(reference_estimate.ok());
    CHECK(est.terms.total() == reference_estimate->terms.total());
    CHECK(est.n_ctx_padded == 512);
    auto session = core_session(demo("tiny-llama-q4_0.gguf"));
    auto reference = measure_memory(*session, view.options);
    REQUIRE(reference.ok());
    CHECK(measured.terms.weights == reference->terms.weights);
    CHECK(measured.terms.kv == reference->terms.kv);
    CHECK(measured.terms.compute == reference->terms.compute);
    CHECK(measured.n_ctx == 512);
    CHECK(est.terms.kv == measured.terms.kv);
    // llama.cpp's plan beside them: the dry-run result `mlens memory` prints, for the same settings.
    REQUIRE(view.plan().has_value());
    INFO((view.plan()->ok() ? std::string() : view.plan()->error().to_string()));
    REQUIRE(view.plan()->ok());
    SessionOptions plan_session;
    plan_session.n_ctx = 16;
    auto plan_reference = dry_run_memory(demo("tiny-llama-q4_0.gguf"), view.options, plan_session);
    REQUIRE(plan_reference.ok());
    CHECK(view.plan()->value().terms.weights == plan_reference->terms.weights);
    CHECK(view.plan()->value().terms.kv == plan_reference->terms.kv);
    CHECK(view.plan()->value().terms.compute == plan_reference->terms.compute);
    CHECK(view.plan()->value().terms.kv == measured.terms.kv);
    h.every_tab();
}
