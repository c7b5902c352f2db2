// The Compat panel driven headless against the Ollama-format demo files: the plan job, the rows
// and counts it exposes, the filters, and the upstream export run from the panel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include <imgui.h>

#include "build_paths.h"
#include "headless.h"
#include "mlens/compat/rewrite_plan.h"
#include "mlens/formats/gguf_reader.h"
#include "panels/compat_panel.h"
#include "state/compat_rows.h"
#include "state/workspace.h"
#include "workspace_harness.h"

using namespace mlens;
using mlens::compat::EditKind;
using mlens::test::HeadlessImGui;
using mlens::test::TempDir;

namespace {

std::string demo(const std::string& name) { return std::string(MLENS_DEMO_DIR) + "/" + name; }

struct CompatHarness : test::WorkspaceHarness {
    CompatPanel panel;
    Document* doc = nullptr;

    explicit CompatHarness(const std::string& path) { doc = &open_ready(path); }
    PanelContext context() { return context_of(*doc); }
    void frame() {
        PanelContext ctx = context();
        imgui.window_frame(
            "compat", 1400, 900, [&] { panel.draw(ctx); }, [&] { panel.draw_windows(ctx); });
    }
    // Frames until the jobs the panel started are done and their results shown.
    void settle() {
        frames_until_jobs_done(3, [this] { frame(); });
    }
};

const CompatRow& row_named(const std::vector<CompatRow>& rows, const std::string& name) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const CompatRow& r) { return r.left_name == name || r.right_name == name; });
    if (it == rows.end()) FAIL("no row " << name);
    return *it;
}

size_t changed_rows(const std::vector<CompatRow>& rows) {
    return static_cast<size_t>(std::count_if(rows.begin(), rows.end(), [](const CompatRow& r) { return r.changed(); }));
}

size_t count(const CompatSide& s, EditKind k) { return s.counts[static_cast<size_t>(k)]; }

}  // namespace

TEST_CASE("the compat panel plans the Ollama gemma3 demo file once, on a job", "[gui-compat]") {
    CompatHarness h(demo("ollama-gemma3.gguf"));
    const PanelInfo* info = find_panel("compat");
    REQUIRE(info);
    CHECK(info->slot == PanelSlot::center);
    CHECK(panel_shows(*info, *h.doc));
    h.frame();
    CHECK((h.panel.planning() || h.panel.view()));
    h.settle();
    CHECK_FALSE(h.panel.planning());
    const CompatView* v = h.panel.view();
    REQUIRE(v);

    const compat::RewritePlan plan = compat::plan_compat(*h.doc->model());
    CHECK(v->text.counts == plan.text.counts());
    CHECK(v->clip.counts == plan.clip.counts());
    CHECK(v->plan.text.handlers == std::vector<std::string>{"handle_gemma3"});
    CHECK(v->plan.clip.handlers == std::vector<std::string>{"handle_gemma3_clip"});
    // What the spec's handle_gemma3 / handle_gemma3_clip do to this file.
    CHECK(count(v->text, EditKind::injected) == 6);
    CHECK(count(v->text, EditKind::changed) == 3);
    CHECK(count(v->text, EditKind::hidden) == 23);
    CHECK(count(v->clip, EditKind::renamed) == 19);
    CHECK(count(v->clip, EditKind::retyped) == 2);
    CHECK(count(v->clip, EditKind::data_op) == 2);
    CHECK(v->clip.arch_after == "clip");
    CHECK(v->vision_export);

    const CompatRow& eps = row_named(v->text.metadata, "gemma3.attention.layer_norm_rms_epsilon");
    CHECK(eps.kind == EditKind::injected);
    CHECK(eps.left_name.empty());
    CHECK(eps.right_type == "FLOAT32");
    CHECK(eps.right_value == "1e-06");
    CHECK(eps.rule == "handle_gemma3: inject");
    const CompatRow& tokens = row_named(v->text.metadata, "tokenizer.ggml.tokens");
    CHECK(tokens.kind == EditKind::changed);
    CHECK(tokens.left_value.find("\xC3\x97 324]") != std::string::npos);
    CHECK(tokens.right_value.find("\xC3\x97 320]") != std::string::npos);
    CHECK(tokens.note == "truncated from 324 to 320 entries; moved to the end of the key list");
    const CompatRow& arch = row_named(v->text.metadata, "general.architecture");
    CHECK_FALSE(arch.changed());
    CHECK(arch.right_value == "gemma3");
    const CompatRow& vision = row_named(v->text.tensors, "v.patch_embedding.weight");
    CHECK(vision.kind == EditKind::hidden);
    CHECK(vision.hidden);
    CHECK(vision.right_value == "hidden");
    const CompatRow& patch = row_named(v->clip.tensors, "v.patch_embedding.weight");
    CHECK(patch.kind == EditKind::data_op);
    CHECK(patch.has(EditKind::renamed));
    CHECK(patch.has(EditKind::retyped));
    CHECK(patch.right_name == "v.patch_embd.weight");
    CHECK(patch.left_type == "F16");
    CHECK(patch.right_type == "F32");
    CHECK(patch.rule.find("F16\xE2\x86\x92"
                          "F32 from v.patch_embedding.weight") != std::string::npos);

    SECTION("only changes and the filter choose the rows") {
        CHECK(h.panel.only_changes());
        CHECK(h.panel.listed(0, 0) == changed_rows(v->text.metadata));
        CHECK(h.panel.listed(0, 0) == 9);
        CHECK(h.panel.listed(0, 1) == 23);
        h.panel.set_only_changes(false);
        h.frame();
        CHECK(h.panel.listed(0, 0) == h.doc->model()->metadata.size() + 6);
        CHECK(h.panel.listed(0, 1) == h.doc->model()->tensors.size());
        CHECK(h.panel.listed(1, 1) == h.doc->model()->tensors.size());
        h.panel.set_only_changes(true);
        h.panel.set_filter("PATCH_EMB");
        h.frame();
        CHECK(h.panel.listed(1, 1) == 2);
        CHECK(h.panel.listed(1, 0) == 0);
        h.panel.set_filter(
            "F16\xE2\x86\x92"
            "F32");
        h.frame();
        CHECK(h.panel.listed(1, 1) == 2);
    }

    SECTION("the export writes both files and they open without errors") {
        h.panel.open_export(*h.doc);
        CHECK(h.panel.exporter().is_open());
        CHECK(h.panel.exporter().text_path() == demo("ollama-gemma3.upstream.gguf"));
        CHECK(h.panel.exporter().mmproj_path() == demo("ollama-gemma3.mmproj.gguf"));
        TempDir dir;
        h.panel.exporter().set_paths(dir.file("text.gguf"), dir.file("mmproj.gguf"));
        PanelContext ctx = h.context();
        h.panel.start_export(ctx);
        CHECK(h.panel.exporter().running());
        h.settle();
        CHECK_FALSE(h.panel.exporter().running());
        const ExportOutcome* out = h.panel.exporter().outcome();
        REQUIRE(out);
        INFO((out->ok() ? std::string() : out->error().to_string()));
        REQUIRE(out->ok());
        REQUIRE((*out)->files.size() == 2);
        CHECK((*out)->files[0].path == dir.file("text.gguf"));
        CHECK((*out)->files[1].data_ops == 2);

        auto text = open_gguf(dir.file("text.gguf"));
        REQUIRE(text);
        CHECK(text->error_count() == 0);
        CHECK(text->tensors.size() == h.doc->model()->tensors.size() - 23);
        CHECK(text->find("gemma3.rope.freq_base") != nullptr);
        CHECK(text->find("tokenizer.ggml.tokens")->value.array->count == 320);
        auto mmproj = open_gguf(dir.file("mmproj.gguf"));
        REQUIRE(mmproj);
        CHECK(mmproj->error_count() == 0);
        CHECK(mmproj->get_string("general.architecture") == "clip");

        // "Open exported file" opens it as a document of its own.
        Document& opened = h.open_ready(dir.file("text.gguf"));
        CHECK(opened.model()->error_count() == 0);
    }
}

TEST_CASE("the compat panel shows the qwen25vl demo's arch switch and prefix copies", "[gui-compat]") {
    CompatHarness h(demo("ollama-qwen25vl.gguf"));
    h.settle();
    const CompatView* v = h.panel.view();
    REQUIRE(v);
    const compat::RewritePlan plan = compat::plan_compat(*h.doc->model());
    CHECK(v->text.counts == plan.text.counts());
    CHECK(v->clip.counts == plan.clip.counts());
    CHECK(v->text.arch_before == "qwen25vl");
    CHECK(v->text.arch_after == "qwen2vl");
    const CompatRow& copied = row_named(v->text.metadata, "qwen2vl.context_length");
    CHECK(copied.kind == EditKind::injected);
    CHECK(copied.rule == "handle_qwen25vl: copy from qwen25vl.context_length");
    CHECK(copied.action == "copy");
    CHECK(copied.copied_from == "qwen25vl.context_length");
    const CompatRow& sections = row_named(v->text.metadata, "qwen2vl.rope.dimension_sections");
    CHECK(sections.right_value == "[INT32 \xC3\x97 4] 2, 3, 3, 0");
    const CompatRow& arch = row_named(v->text.metadata, "general.architecture");
    CHECK(arch.kind == EditKind::changed);
    CHECK(arch.right_value == "qwen2vl");
    CHECK(arch.rule == "handle_qwen25vl: set");
    CHECK(arch.action == "set");
    CHECK(arch.note == "loader architecture qwen25vl \xE2\x86\x92 qwen2vl; moved to the end of the key list");
    const CompatRow& merger = row_named(v->clip.tensors, "v.merger.mlp.0.weight");
    CHECK(merger.kind == EditKind::renamed);
    CHECK(merger.right_name == "mm.0.weight");
    CHECK(count(v->clip, EditKind::data_op) == 2);
    CHECK(h.panel.listed(1, 1) == changed_rows(v->clip.tensors));
}

TEST_CASE("the compat panel on an upstream file says what was checked and lists everything", "[gui-compat]") {
    CompatHarness h(demo("tiny-llama-q8_0.gguf"));
    h.settle();
    const CompatView* v = h.panel.view();
    REQUIRE(v);
    CHECK(v->plan.empty());
    CHECK(v->text.empty);
    CHECK(v->clip.empty);
    CHECK_FALSE(v->vision_export);
    CHECK(v->text.summary.starts_with("no handler fired for architecture \"llama\""));
    CHECK(v->text.summary.find("handle_llama3_metadata") != std::string::npos);
    CHECK_FALSE(h.panel.only_changes());
    CHECK(h.panel.listed(0, 0) == h.doc->model()->metadata.size());
    CHECK(h.panel.listed(0, 1) == h.doc->model()->tensors.size());
    CHECK(changed_rows(v->text.tensors) == 0);
    CHECK(changed_rows(v->text.metadata) == 0);
    h.panel.open_export(*h.doc);
    CHECK(h.panel.exporter().mmproj_path().empty());
}

TEST_CASE("the compat panel calls a file Ollama-made on evidence", "[gui-compat]") {
    CompatHarness h(demo("ollama-gemma3.gguf"));
    h.settle();
    REQUIRE(h.panel.view());
    CHECK(h.panel.view()->origin.ollama_made());
    CHECK(h.panel.view()->origin.evidence.front().marker == "gemma3: tensor v.blk.0.attn_k.bias (prefix v.)");
}

TEST_CASE("the compat panel does not call llama.cpp's own Llama-3 vocabulary Ollama-made", "[gui-compat]") {
    // The shim's Llama-3 fix would rewrite it, yet nothing in it shows Ollama made it.
    CompatHarness h(std::string(MLENS_LLAMA_SOURCE) + "/models/ggml-vocab-llama-bpe.gguf");
    h.settle();
    const CompatView* v = h.panel.view();
    REQUIRE(v);
    CHECK_FALSE(v->origin.ollama_made());
    CHECK(v->plan.text.handlers == std::vector<std::string>{"handle_llama3_metadata"});
    CHECK(h.panel.only_changes());
}
