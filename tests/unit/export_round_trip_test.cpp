// Export to upstream layout, end to end: a tiny Ollama-format model is exported, llama.cpp loads
// the result, and its logits equal those of the same weights written directly in upstream layout.
#include <catch2/catch.hpp>

#include "cli_runner.h"
#include "llama_logits.h"
#include "mlens/compat/upstream_export.h"
#include "mlens/formats/gguf_reader.h"
#include "mlens/infer/generate.h"
#include "mlens/infer/model_loader.h"
#include "test_paths.h"
#include "tiny_models.h"

using namespace mlens;
using namespace mlens::test;

namespace {

struct RoundTrip {
    compat::RewritePlan plan;
    compat::ExportReport report;
    LlamaLogits exported;
    LlamaLogits reference;
    Model written;
};

RoundTrip round_trip(const TempDir& dir, const TinyModel& ollama, const TinyModel& upstream, const std::string& mmproj = {}) {
    write_tiny_model(ollama, dir.file("ollama.gguf"));
    write_tiny_model(upstream, dir.file("upstream.gguf"));
    auto model = open_gguf(dir.file("ollama.gguf"));
    REQUIRE(model);
    RoundTrip r;
    r.plan = compat::plan_compat(*model);
    auto report = compat::export_upstream(*model, r.plan, {dir.file("exported.gguf"), mmproj, {}});
    INFO((report ? std::string() : report.error().to_string()));
    REQUIRE(report);
    r.report = *report;
    r.exported = llama_logits(dir.file("exported.gguf"), upstream.prompt);
    r.reference = llama_logits(dir.file("upstream.gguf"), upstream.prompt);
    auto written = open_gguf(dir.file("exported.gguf"));
    REQUIRE(written);
    r.written = std::move(*written);
    return r;
}

// The exported file and the upstream reference both ran in llama.cpp, with `n_vocab` tokens and
// the same logits.
void require_same_logits(const RoundTrip& r, int32_t n_vocab) {
    INFO(r.exported.error);
    REQUIRE(r.exported.error.empty());
    REQUIRE(r.reference.error.empty());
    CHECK(r.exported.n_vocab == n_vocab);
    CHECK(max_abs_difference(r.exported.logits, r.reference.logits) == 0.0f);
}

}  // namespace

TEST_CASE("export round trip: llama with the Llama-3 metadata gap gives the upstream logits", "[export]") {
    TempDir dir;
    RoundTrip r = round_trip(dir, tiny_llama3(TinyLayout::ollama), tiny_llama3(TinyLayout::upstream));
    CHECK(r.plan.text.handlers == std::vector<std::string>{"handle_llama3_metadata"});
    require_same_logits(r, 128256);
    CHECK(r.exported.logits.size() == 8u * 128256u);
    CHECK(r.written.get_string("tokenizer.ggml.pre") == "llama-bpe");
    CHECK(r.written.get_uint("tokenizer.ggml.eos_token_id") == 128009u);
    CHECK(r.written.get_uint("tokenizer.ggml.eot_token_id") == 128009u);
    REQUIRE(r.report.files.size() == 1);
    CHECK(r.report.files[0].tensors == 11);
    CHECK(r.report.files[0].data_ops == 0);
    CHECK(r.report.notes.empty());
}

TEST_CASE("export round trip: gemma3 text drops vision, truncates the vocabulary, injects defaults", "[export]") {
    TempDir dir;
    RoundTrip r = round_trip(dir, tiny_gemma3(TinyLayout::ollama), tiny_gemma3(TinyLayout::upstream), dir.file("mmproj.gguf"));
    CHECK(r.plan.text.handlers == std::vector<std::string>{"handle_gemma3"});
    require_same_logits(r, 32000);
    CHECK(r.written.find("tokenizer.ggml.tokens")->value.array->count == 32000);
    CHECK(r.written.tensors.size() == 15);
    CHECK(r.written.find_tensor("v.patch_embedding.weight") == nullptr);

    REQUIRE(r.report.files.size() == 2);
    CHECK(r.report.files[1].side == compat::PlanSide::clip);
    auto mmproj = open_gguf(dir.file("mmproj.gguf"));
    REQUIRE(mmproj);
    CHECK(mmproj->get_string("general.architecture") == "clip");
    CHECK(mmproj->get_string("clip.projector_type") == "gemma3");
    CHECK(mmproj->find("tokenizer.ggml.tokens") == nullptr);
    std::vector<std::string> names;
    for (const TensorInfo& t : mmproj->tensors) names.push_back(t.name + " " + t.type.name);
    CHECK(names == std::vector<std::string>{"v.patch_embd.weight F32", "v.blk.0.ln1.weight F32", "mm.input_projection.weight F16"});
    CHECK(r.report.files[1].data_ops == 1);
}

TEST_CASE("export round trip: lfm2 renames its final norm and fixes the FFN length", "[export]") {
    TempDir dir;
    RoundTrip r = round_trip(dir, tiny_lfm2(TinyLayout::ollama), tiny_lfm2(TinyLayout::upstream));
    CHECK(r.plan.text.handlers == std::vector<std::string>{"handle_lfm2"});
    require_same_logits(r, 128256);
    CHECK(r.written.get_string("tokenizer.ggml.pre") == "lfm2");
    CHECK(r.written.get_uint("lfm2.feed_forward_length") == 64u);
    CHECK(r.written.find_tensor("token_embd_norm.weight") != nullptr);
    CHECK(r.written.find_tensor("output_norm.weight") == nullptr);
    // The Ollama layout as stored is refused by llama.cpp: its final norm has the wrong name.
    write_tiny_model(tiny_lfm2(TinyLayout::ollama), dir.file("raw.gguf"));
    auto raw = Session::load(dir.file("raw.gguf"), SessionOptions{});
    REQUIRE_FALSE(raw);
    INFO(raw.error().to_string());
    CHECK(raw.error().code == ErrorCode::E_LLAMA_LOAD);
    CHECK(raw.error().message.find("token_embd_norm.weight") != std::string::npos);
}

TEST_CASE("export round trip: gpt-oss renames the architecture, keys and tensors", "[export]") {
    TempDir dir;
    RoundTrip r = round_trip(dir, tiny_gptoss(TinyLayout::ollama), tiny_gptoss(TinyLayout::upstream));
    CHECK(r.plan.text.handlers == std::vector<std::string>{"handle_gptoss"});
    require_same_logits(r, 128256);
    CHECK(r.written.get_string("general.architecture") == "gpt-oss");
    CHECK(r.written.get_string("tokenizer.ggml.pre") == "gpt-4o");
    CHECK(r.written.get_string("gpt-oss.rope.scaling.type") == "yarn");
    CHECK(r.written.get_uint("gpt-oss.expert_feed_forward_length") == 32u);
    // rename_kv_prefix copies: the gptoss.* keys stay beside their gpt-oss.* copies.
    CHECK(r.written.get_uint("gptoss.block_count") == 2u);
    CHECK(r.written.get_uint("gpt-oss.block_count") == 2u);
    for (const char* name :
         {"blk.1.attn_output.weight", "blk.1.attn_output.bias", "blk.1.attn_sinks.weight", "blk.1.post_attention_norm.weight"})
        CHECK(r.written.find_tensor(name) != nullptr);
    CHECK(r.report.files[0].tensors == 41);
}

TEST_CASE("mlens export-upstream writes the upstream GGUF and refuses bad requests", "[export]") {
    TempDir dir;
    write_tiny_model(tiny_gemma3(TinyLayout::ollama), dir.file("ollama.gguf"));
    CliRun ok = run_mlens({"export-upstream", dir.file("ollama.gguf"), dir.file("text.gguf"), "--mmproj", dir.file("mm.gguf")});
    CHECK(ok.exit_status == 0);
    CHECK(ok.out.find("wrote text GGUF " + dir.file("text.gguf") + ": ") != std::string::npos);
    CHECK(ok.out.find("wrote mmproj " + dir.file("mm.gguf") + ": ") != std::string::npos);
    CHECK(open_gguf(dir.file("text.gguf")));

    CliRun same = run_mlens({"export-upstream", dir.file("ollama.gguf"), dir.file("ollama.gguf")});
    CHECK(same.exit_status == 1);
    CHECK(same.err.find("E_OUTPUT_IS_INPUT") != std::string::npos);

    write_tiny_model(tiny_llama3(TinyLayout::ollama), dir.file("llama.gguf"));
    CliRun no_vision = run_mlens({"export-upstream", dir.file("llama.gguf"), dir.file("l.gguf"), "--mmproj", dir.file("lm.gguf")});
    CHECK(no_vision.exit_status == 2);
    CHECK(no_vision.err.find("E_NO_VISION") != std::string::npos);

    CliRun note = run_mlens({"export-upstream", dir.file("ollama.gguf"), dir.file("text2.gguf")});
    CHECK(note.exit_status == 0);
    CHECK(note.out.find("note: the model has a vision part; no mmproj was written (use --mmproj)") != std::string::npos);
}

TEST_CASE("an Ollama-made GGUF loads for inference through the upstream export, and says so", "[export][infer]") {
    TempDir dir;
    write_tiny_model(tiny_gemma3(TinyLayout::ollama), dir.file("ollama.gguf"));
    write_tiny_model(tiny_gemma3(TinyLayout::upstream), dir.file("upstream.gguf"));
    SessionOptions options;
    options.n_ctx = 64;

    auto ollama = load_model_session(dir.file("ollama.gguf"), options);
    INFO((ollama ? std::string() : ollama.error().to_string()));
    REQUIRE(ollama);
    CHECK(ollama->route.through_export);
    CHECK(ollama->route.handlers == std::vector<std::string>{"handle_gemma3"});
    CHECK(ollama->route.banner ==
          "Ollama-made GGUF: loaded through the upstream export (handle_gemma3); evidence: gemma3: tensor "
          "v.patch_embedding.weight (prefix v.) (+3 more)");
    CHECK(ollama->session->facts().n_vocab == 32000);
    CHECK(ollama->session->facts().architecture == "gemma3");

    auto upstream = load_model_session(dir.file("upstream.gguf"), options);
    REQUIRE(upstream);
    CHECK_FALSE(upstream->route.through_export);
    CHECK(upstream->route.banner.empty());

    // Both sessions see the same model: the same greedy continuation.
    GenerateOptions gen;
    gen.max_tokens = 4;
    gen.stop_at_eog = false;
    auto a = generate_from_tokens(*ollama->session, {2, 10, 20}, gen);
    auto b = generate_from_tokens(*upstream->session, {2, 10, 20}, gen);
    REQUIRE(a);
    REQUIRE(b);
    std::vector<int32_t> ids_a, ids_b;
    for (const GenerationStep& s : a->steps) ids_a.push_back(s.token);
    for (const GenerationStep& s : b->steps) ids_b.push_back(s.token);
    CHECK(ids_a == ids_b);
    CHECK(ids_a.size() == 4);

    CliRun run = run_mlens({"run", dir.file("ollama.gguf"), "-p", "hello", "-n", "2"});
    CHECK(run.exit_status == 0);
    CHECK(run.err.find("note: " + dir.file("ollama.gguf") + ": Ollama-made GGUF: loaded through the upstream export") != std::string::npos);
}
