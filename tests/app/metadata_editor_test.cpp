// Metadata editing in the app: the staged edits with undo and redo (state/metadata_edits.h), and
// a GGUF without a chat template fixed in the Metadata panel, saved as a new file by the editor's
// job and opened again.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

#include "build_paths.h"
#include "mlens/formats/gguf_reader.h"
#include "panels/metadata_editor.h"
#include "panels/metadata_panel.h"
#include "state/metadata_edits.h"
#include "workspace_harness.h"

using namespace mlens;

namespace {

std::string demo(const std::string& name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

const std::string kTemplate = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";

}  // namespace

TEST_CASE("staged metadata edits keep one edit per key, with undo and redo", "[gui-edit]") {
    auto model = open_gguf(demo("tiny-llama-f32.gguf"));
    REQUIRE(model);
    MetadataEdits edits;
    CHECK_FALSE(edits.dirty());
    CHECK(edits.plan(*model) == nullptr);
    edits.stage(Edit::set("general.name", "first"));
    edits.stage(Edit::set("general.name", "second"));
    REQUIRE(edits.edits().edits.size() == 1);
    CHECK(edits.edits().edits[0].text == "second");
    edits.stage(Edit::remove("general.architecture"));
    CHECK(edits.edits().edits.size() == 2);
    REQUIRE(edits.undo());
    CHECK(edits.edits().edits.size() == 1);
    REQUIRE(edits.undo());
    CHECK(edits.edits().edits[0].text == "first");
    REQUIRE(edits.redo());
    CHECK(edits.edits().edits[0].text == "second");
    edits.unstage(0);
    CHECK_FALSE(edits.dirty());
    CHECK_FALSE(edits.can_redo());
    edits.stage(Edit::set("tokenizer.ggml.eos_token_id", "99999999999"));
    auto refused = edits.plan(*model);
    REQUIRE(refused);
    REQUIRE_FALSE(*refused);
    CHECK(refused->error().code == ErrorCode::E_RANGE);
    edits.saved();
    CHECK_FALSE(edits.dirty());
    CHECK_FALSE(edits.can_undo());
}

TEST_CASE("a GGUF without a chat template gets one in the Metadata panel, saved as a new file and reopened", "[gui-edit]") {
    test::TempDir dir;
    const std::string in = dir.file("tiny.gguf");
    std::filesystem::copy_file(demo("tiny-llama-f32.gguf"), in);
    test::WorkspaceHarness h;
    Document& doc = h.open_ready(in);
    REQUIRE_FALSE(doc.model()->find("tokenizer.chat_template"));
    MetadataPanel panel;
    MetadataEditor editor;
    auto frame = [&] {
        PanelContext ctx = h.context_of(doc);
        h.imgui.window_frame(
            "metadata", 1366, 700,
            [&] {
                panel.draw(ctx);
                editor.toolbar(ctx);
                editor.staged_view(ctx);
            },
            [&] {
                panel.draw_windows(ctx);
                editor.draw_windows(ctx);
            });
    };
    editor.open_chat_template(doc);
    frame();
    doc.edits.stage(Edit::set("tokenizer.chat_template", kTemplate, KeyType{ValueType::string, std::nullopt}));
    doc.edits.stage(Edit::set("general.name", "tiny fixed"));
    frame();
    REQUIRE(doc.edits.dirty());
    {
        PanelContext ctx = h.context_of(doc);
        editor.save_as(ctx, dir.file("fixed.gguf"));
    }
    CHECK(editor.saving());
    h.frames_until_jobs_done(2, frame);
    REQUIRE(editor.save_outcome());
    REQUIRE(*editor.save_outcome());
    const EditOutcome& saved = **editor.save_outcome();
    CHECK(saved.verification.passed());
    CHECK(saved.verification.tensors_equal == doc.model()->tensors.size());
    CHECK_FALSE(doc.edits.dirty());
    Document& reopened = h.open_ready(dir.file("fixed.gguf"));
    CHECK(reopened.model()->get_string("tokenizer.chat_template") == kTemplate);
    CHECK(reopened.model()->get_string("general.name") == "tiny fixed");
    CHECK(doc.model()->find("tokenizer.chat_template") == nullptr);
}

TEST_CASE("Save As never replaces an open document", "[gui-edit]") {
    test::TempDir dir;
    const std::string in = dir.file("tiny.gguf");
    std::filesystem::copy_file(demo("tiny-llama-f32.gguf"), in);
    test::WorkspaceHarness h;
    Document& doc = h.open_ready(in);
    MetadataEditor editor;
    doc.edits.stage(Edit::set("general.name", "x"));
    auto frame = [&] {
        PanelContext ctx = h.context_of(doc);
        h.imgui.window_frame(
            "metadata", 1366, 700, [&] { editor.staged_view(ctx); }, [&] { editor.draw_windows(ctx); });
    };
    {
        PanelContext ctx = h.context_of(doc);
        editor.save_as(ctx, in);
    }
    h.frames_until_jobs_done(2, frame);
    REQUIRE(editor.save_outcome());
    REQUIRE_FALSE(*editor.save_outcome());
    CHECK(editor.save_outcome()->error().code == ErrorCode::E_OUTPUT_IS_INPUT);
    CHECK(doc.edits.dirty());
}

TEST_CASE("the chat template editor previews the text being edited through llama.cpp", "[gui-edit][infer]") {
    test::WorkspaceHarness h;
    Document& doc = h.open_ready(demo("tiny-llama-f32.gguf"));
    MetadataEditor editor;
    auto frame = [&] {
        PanelContext ctx = h.context_of(doc);
        h.imgui.window_frame(
            "metadata", 1366, 700, [&] { editor.toolbar(ctx); }, [&] { editor.draw_windows(ctx); });
    };
    auto preview = [&](std::string text) {
        editor.open_chat_template(doc, std::move(text));
        frame();
        PanelContext ctx = h.context_of(doc);
        editor.preview_chat_template(ctx);
        for (int i = 0; i < 6000 && editor.previewing(); ++i) {
            frame();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        frame();
        REQUIRE(editor.preview() != nullptr);
        return editor.preview();
    };
    // A ChatML template, recognised by llama.cpp: the sample conversation in its turns.
    const Result<ChatRender>* chatml = preview(kTemplate);
    REQUIRE(*chatml);
    CHECK((*chatml)->template_source == kTemplate);
    CHECK((*chatml)->prompt.starts_with("<|im_start|>system\n"));
    CHECK((*chatml)->prompt.ends_with("<|im_start|>assistant\n"));
    CHECK_FALSE((*chatml)->tokens.empty());
    // A template llama.cpp does not recognise: its refusal, not a rendering.
    const Result<ChatRender>* unknown = preview("{{ nothing llama.cpp knows }}");
    REQUIRE_FALSE(*unknown);
    CHECK(unknown->error().code == ErrorCode::E_TEMPLATE);
}
