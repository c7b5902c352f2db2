// compat::load_rewrite and key_after: which GGUFs llama.cpp is given rewritten, and the value it
// reads for a key then, checked against the upstream view (upstream_view) the exporter writes.
#include <catch2/catch.hpp>

#include "build_paths.h"
#include "compat_fixture.h"
#include "mlens/compat/load_rewrite.h"
#include "mlens/open/target.h"

using namespace mlens;
using namespace mlens::compat;
using namespace mlens::test;

TEST_CASE("load_rewrite: an Ollama-made GGUF whose text side changes is rewritten, an upstream one is not", "[compat]") {
    TempDir dir;
    Model ollama = OllamaGguf("gemma3")
                       .u32("gemma3.context_length", 8192)
                       .kv("tokenizer.ggml.tokens", array_strings({"<pad>", "<eos>", "a", "b"}))
                       .tensor("token_embd.weight", {8, 4}, kF16)
                       .tensor("v.patch_embedding.weight", {4, 4}, kF16)
                       .write(dir, "ollama.gguf");
    auto rewrite = load_rewrite(ollama);
    REQUIRE(rewrite);
    CHECK(rewrite->origin.ollama_made());
    CHECK(rewrite->plan.text.handlers == strings({"handle_gemma3"}));

    // Every key of the upstream view reads as key_after replays it; the edited ones name their edit.
    const UpstreamView view = upstream_view(ollama, rewrite->plan.text);
    for (const ResultKv& r : view.metadata) {
        const KeyAfterRewrite after = key_after(ollama, rewrite->plan.text, r.key);
        REQUIRE(after.value);
        CHECK(typed(*after.value) == typed(r.value));
        CHECK((after.edit != nullptr) == r.edit.has_value());
    }
    const KeyAfterRewrite tmpl = key_after(ollama, rewrite->plan.text, "tokenizer.chat_template");
    REQUIRE(tmpl.edit);
    CHECK(tmpl.edit->rule == "handle_gemma3");
    CHECK_FALSE(key_after(ollama, rewrite->plan.text, "no.such.key").value);

    auto demo = open_model(std::string(MLENS_DEMO_DIR) + "/tiny-llama-f32.gguf");
    REQUIRE(demo);
    CHECK_FALSE(load_rewrite(*demo));
}

TEST_CASE("key_after: inject and copy add only an absent key, set replaces, remove removes", "[compat]") {
    TempDir dir;
    Model m = OllamaGguf("llama").str("kept", "stored").str("gone", "stored").str("replaced", "stored").write(dir);
    SidePlan side;
    side.kv_edits.push_back({KvOp::inject, EditKind::injected, "kept", "", value_string("injected"), std::nullopt, "r1", ""});
    side.kv_edits.push_back({KvOp::remove, EditKind::removed, "gone", "", Value{}, std::nullopt, "r2", ""});
    side.kv_edits.push_back({KvOp::set, EditKind::changed, "replaced", "", value_string("set"), std::nullopt, "r3", ""});
    side.kv_edits.push_back({KvOp::copy, EditKind::injected, "added", "kept", value_string("copied"), std::nullopt, "r4", ""});
    side.kv_edits.push_back({KvOp::inject, EditKind::injected, "added", "", value_string("second"), std::nullopt, "r5", ""});
    side.kv_edits.push_back({KvOp::inject, EditKind::injected, "gone", "", value_string("back"), std::nullopt, "r6", ""});

    const KeyAfterRewrite kept = key_after(m, side, "kept");
    REQUIRE(kept.value);
    CHECK(kept.value->string_value() == "stored");
    CHECK_FALSE(kept.edit);
    const KeyAfterRewrite replaced = key_after(m, side, "replaced");
    REQUIRE(replaced.edit);
    CHECK(replaced.edit->rule == "r3");
    CHECK(replaced.value->string_value() == "set");
    const KeyAfterRewrite added = key_after(m, side, "added");
    REQUIRE(added.edit);
    CHECK(added.edit->rule == "r4");
    CHECK(added.value->string_value() == "copied");
    const KeyAfterRewrite back = key_after(m, side, "gone");  // removed, then injected again
    REQUIRE(back.edit);
    CHECK(back.edit->rule == "r6");
    for (const char* key : {"kept", "gone", "replaced", "added"})
        CHECK(typed(result_value(m, side, key)) == typed(*key_after(m, side, key).value));
}
