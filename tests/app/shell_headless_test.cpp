#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <imgui_internal.h>

#include "build_paths.h"
#include "app_shell.h"
#include "document_notice.h"
#include "gguf_builder.h"
#include "gui_fixture.h"
#include "headless.h"
#include "loopback_server.h"
#include "panels/panel.h"
#include "panels/panel_links.h"
#include "theme.h"

using namespace mlens;
using mlens::test::HeadlessImGui;
using mlens::test::TempDir;

namespace {

struct ShellHarness {
    TempDir fixture_dir;  // where open_fixture writes the fixture model, kept past the shell
    HeadlessImGui imgui;
    Settings settings;
    JobRunner jobs;
    AppShell shell{settings, jobs, imgui.fonts(), ShellOptions{}};

    void frames(int n) {
        for (int i = 0; i < n; ++i) imgui.frame([&] { shell.frame(); });
    }
    // Opens `path` and runs frames until the open job is published.
    Document& open(const std::string& path) {
        shell.open(path);
        jobs.wait_all();
        frames(2);
        Document* doc = shell.workspace().active();
        REQUIRE(doc != nullptr);
        return *doc;
    }
    // Writes the fixture model (gui_fixture.h) and opens it.
    Document& open_fixture() {
        REQUIRE(test::write_gui_fixture(fixture_dir.file("fixture.gguf")));
        return open(fixture_dir.file("fixture.gguf"));
    }
    void every_panel(Document& doc) {
        for (const PanelInfo& p : panel_registry()) {
            doc.focus_panel = p.id;
            frames(3);
        }
    }
};

size_t key_index(const Model& m, const std::string& key) {
    for (size_t i = 0; i < m.metadata.size(); ++i)
        if (m.metadata[i].key == key) return i;
    FAIL("no key " << key);
    return 0;
}

}  // namespace

TEST_CASE("every panel draws the fixture document with every kind of selection") {
    ShellHarness h;
    Document& doc = h.open_fixture();
    REQUIRE(doc.ready());
    const Model& m = *doc.model();
    CHECK(m.tensors.size() == 17);
    CHECK(m.warning_count() >= 2);
    CHECK(doc.index()->tokenizer.count() == 21);
    CHECK(doc.index()->tokenizer.chat_template.has_value());
    CHECK(doc.selection.kind == SelectionKind::header);
    CHECK(h.settings.recent_files.front() == doc.path);
    // The CJK code points of the vocabulary reach the font atlas.
    CHECK(std::find(doc.index()->code_points.begin(), doc.index()->code_points.end(), 0x65E5u) != doc.index()->code_points.end());

    h.every_panel(doc);
    for (size_t i = 0; i < m.metadata.size(); ++i) {
        doc.select({SelectionKind::metadata, i}, "metadata");
        h.frames(2);
    }
    for (size_t i = 0; i < m.tensors.size(); ++i) {
        doc.select({SelectionKind::tensor, i}, "tensors");
        h.frames(2);
    }
    for (size_t i = 0; i < m.diagnostics.size(); ++i) {
        doc.select({SelectionKind::diagnostic, i}, "diagnostics");
        h.frames(2);
    }
    for (size_t i = 0; i < doc.index()->tokenizer.count(); ++i) {
        doc.select({SelectionKind::token, i}, "tokenizer");
        h.frames(2);
    }
    CHECK_FALSE(h.shell.follow_link(doc, "token:x"));
    REQUIRE(h.shell.follow_link(doc, "token:20"));
    CHECK(doc.focus_panel == "tokenizer");
    h.frames(2);
    CHECK(doc.selection == Selection{SelectionKind::token, 20});
    for (size_t g = 0; g < doc.index()->metadata_groups.size(); ++g) {
        REQUIRE(h.shell.follow_link(doc, metadata_group_link(*doc.index(), g)));
        CHECK(doc.focus_panel == "metadata");
        h.frames(2);
    }
    for (size_t l = 0; l < doc.index()->layers.size(); ++l) {
        REQUIRE(h.shell.follow_link(doc, tensor_layer_link(*doc.index(), l)));
        CHECK(doc.focus_panel == "tensors");
        h.frames(2);
    }
    for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.scores"}) {
        doc.follow(metadata_array_link(key_index(m, key)));
        h.frames(3);
        CHECK(doc.pending_links.empty());
    }
    apply_theme(true);
    h.every_panel(doc);
}

TEST_CASE("a damaged file opens with its diagnostics and every panel draws") {
    TempDir dir;
    std::vector<uint8_t> bytes = test::gui_fixture_bytes();
    bytes.resize(700);
    {
        std::ofstream out(dir.file("damaged.gguf"), std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    ShellHarness h;
    Document& doc = h.open(dir.file("damaged.gguf"));
    REQUIRE(doc.ready());
    CHECK(doc.model()->partial);
    CHECK(doc.model()->error_count() >= 1);
    h.every_panel(doc);
    for (size_t i = 0; i < doc.model()->diagnostics.size(); ++i) {
        doc.select({SelectionKind::diagnostic, i});
        h.frames(2);
    }
}

TEST_CASE("a missing file becomes a failed document that can be closed") {
    TempDir dir;
    ShellHarness h;
    Document& doc = h.open(dir.file("missing.gguf"));
    CHECK(doc.state == DocumentState::failed);
    CHECK(!doc.error.empty());
    h.frames(2);
    h.shell.workspace().close(doc.id);
    h.frames(2);
    CHECK(h.shell.workspace().documents().empty());
}

TEST_CASE("a file that is no model opens as an error page that names it") {
    TempDir dir;
    {
        std::ofstream out(dir.file("passwd"), std::ios::binary);
        out << "root:x:0:0:root:/root:/bin/bash\n";
    }
    ShellHarness h;
    Document& doc = h.open(dir.file("passwd"));
    CHECK(doc.state == DocumentState::failed);
    CHECK(doc.error_code == ErrorCode::E_NOT_A_MODEL);
    CHECK(doc.error == "not a model file: 32 bytes, starts with \"root:x:0:0:root:\"\xE2\x80\xA6");
    CHECK(failure_headline(doc) == "passwd is not a model file");
    h.frames(2);
}

TEST_CASE("a cut file opens with a banner that leads to its diagnostics") {
    TempDir dir;
    test::GgufBuilder b;
    b.header(2, 0);
    b.tensor_info("a", {16}, 0, 0).tensor_info("b", {16}, 0, 64);
    b.pad_to(32);
    b.f32_run(32);
    b.bytes.resize(b.bytes.size() - 70);  // b is gone, a lost its last 6 bytes
    test::write_whole_file(dir.file("cut.gguf"), b.bytes);
    ShellHarness h;
    Document& doc = h.open(dir.file("cut.gguf"));
    REQUIRE(doc.ready());
    // One error as listed: the summary stands for the two tensors' out-of-bounds rows.
    CHECK(error_banner_text(*doc.model()) ==
          "1 error \xC2\xB7 E_TRUNCATED_DATA: file ends at 154 of 224 bytes: 70 bytes of tensor data missing; "
          "2 of 2 tensors affected");
    CHECK(doc.model()->tensors[0].presence == DataPresence::partial);
    CHECK(doc.model()->tensors[1].presence == DataPresence::missing);
    h.every_panel(doc);
    TempDir clean;
    REQUIRE(test::write_gui_fixture(clean.file("whole.gguf")));
    CHECK(error_banner_text(*h.open(clean.file("whole.gguf")).model()).empty());
}

TEST_CASE("opening the same path twice keeps one document; several documents are tabs") {
    TempDir dir;
    REQUIRE(test::write_gui_fixture(dir.file("a.gguf")));
    REQUIRE(test::write_gui_fixture(dir.file("b.gguf")));
    ShellHarness h;
    Document& a = h.open(dir.file("a.gguf"));
    Document& b = h.open(dir.file("b.gguf"));
    CHECK(a.id != b.id);
    h.open(dir.file("a.gguf"));
    CHECK(h.shell.workspace().documents().size() == 2);
    h.frames(3);
    CHECK(h.shell.workspace().active()->id == a.id);
    CHECK(h.shell.window_title().find("a.gguf") != std::string::npos);
}

TEST_CASE("several paths opened at once, like one drop, bring the first one's tab forward") {
    TempDir dir;
    for (const char* name : {"a.gguf", "b.gguf", "c.gguf"}) REQUIRE(test::write_gui_fixture(dir.file(name)));
    ShellHarness h;
    h.open(dir.file("a.gguf"));
    h.shell.open_all({dir.file("b.gguf"), dir.file("c.gguf"), dir.file("a.gguf")});
    h.jobs.wait_all();
    h.frames(3);
    CHECK(h.shell.workspace().documents().size() == 3);
    REQUIRE(h.shell.workspace().active() != nullptr);
    CHECK(h.shell.workspace().active()->path == dir.file("b.gguf"));
    CHECK(h.shell.window_title().find("b.gguf") != std::string::npos);
}

TEST_CASE("a folder named with a trailing separator is the same document, titled after the folder") {
    const std::string store = std::string(MLENS_DEMO_DIR) + "/ollama-store";
    ShellHarness h;
    Document& doc = h.open(store + "/");
    CHECK(doc.ready());
    CHECK(doc.path == store);
    CHECK(doc.title.ends_with("ollama-store"));
    h.open(store);
    CHECK(h.shell.workspace().documents().size() == 1);
}

TEST_CASE("closing a document while it opens cancels its job") {
    TempDir dir;
    REQUIRE(test::write_gui_fixture(dir.file("a.gguf")));
    ShellHarness h;
    Document& doc = h.shell.workspace().open(dir.file("a.gguf"));
    uint64_t id = doc.id;
    h.shell.workspace().close(id);
    h.jobs.wait_all();
    h.frames(2);
    CHECK(h.shell.workspace().find(id) == nullptr);
}

TEST_CASE("Help opens the keyboard shortcuts and a guide with every registered panel's description") {
    for (const PanelInfo& p : panel_registry()) {
        INFO(p.id);
        CHECK(std::string(p.description).size() > 40);
    }
    for (const char* window : {"Keyboard shortcuts", "What each panel shows"}) {
        HeadlessImGui imgui;
        Settings settings;
        JobRunner jobs;
        ShellOptions options;
        options.start_select = window[0] == 'K' ? "help:shortcuts" : "help:panels";
        AppShell shell{settings, jobs, imgui.fonts(), options};
        for (int i = 0; i < 3; ++i) imgui.frame([&] { shell.frame(); });
        ImGuiWindow* shown = ImGui::FindWindowByName(window);
        REQUIRE(shown != nullptr);
        CHECK(shown->WasActive);
    }
}

TEST_CASE("side panes collapse to strips and the center takes the width pane_layout gives it") {
    TempDir dir;
    REQUIRE(test::write_gui_fixture(dir.file("fixture.gguf")));
    ShellHarness h;
    h.open(dir.file("fixture.gguf"));
    auto child = [](const char* name) -> ImGuiWindow* {
        // Child windows are named "Parent/name_XXXXXXXX" (8 hex digits of the id).
        const std::string infix = std::string("/") + name + "_";
        for (ImGuiWindow* w : GImGui->Windows) {
            std::string full = w->Name;
            size_t at = full.find(infix);
            if (w->Active && at != std::string::npos && full.size() == at + infix.size() + 8) return w;
        }
        return nullptr;
    };
    auto expected_center = [&] {
        ImGuiWindow* main = ImGui::FindWindowByName("ModelLens##main");
        REQUIRE(main != nullptr);
        return pane_widths(main->ContentRegionRect.GetWidth(), GImGui->Style.ItemSpacing.x, true, h.settings.left_pane, true,
                           h.settings.right_pane)
            .center;
    };
    h.frames(2);
    REQUIRE(child("center_pane") != nullptr);
    REQUIRE(child("left_pane") != nullptr);
    CHECK(child("center_pane")->Size.x == Approx(expected_center()).margin(1.0));
    CHECK(child("center_pane")->Size.x >= 0.6f * 1600.0f);

    h.settings.left_pane.collapsed = true;
    h.settings.right_pane = {500.0f, true};
    h.frames(2);
    REQUIRE(child("left_pane_collapsed") != nullptr);
    REQUIRE(child("right_pane_collapsed") != nullptr);
    CHECK(child("left_pane") == nullptr);
    CHECK(child("left_pane_collapsed")->Size.x == kCollapsedWidth);
    CHECK(child("center_pane")->Size.x == Approx(expected_center()).margin(1.0));
    CHECK(child("center_pane")->Size.x > 1500.0f);
}

TEST_CASE("links reach the panel that accepts them, which the shell brings forward") {
    ShellHarness h;
    Document& doc = h.open_fixture();
    const Model& m = *doc.model();
    REQUIRE_FALSE(m.tensors.empty());
    const size_t last = m.tensors.size() - 1;

    REQUIRE(h.shell.follow_link(doc, "requant:" + m.tensors[last].name));
    CHECK(doc.focus_panel == "weights");
    CHECK(doc.selection == Selection{SelectionKind::tensor, last});
    CHECK_FALSE(h.shell.follow_link(doc, "requant:no.such.tensor"));

    doc.focus_panel.clear();
    REQUIRE(h.shell.follow_link(doc, "error:other.gguf"));
    CHECK(doc.focus_panel == "model_error");
    REQUIRE(h.shell.follow_link(doc, "infer:console"));
    CHECK(doc.focus_panel == "inference");
    CHECK_FALSE(h.shell.follow_link(doc, "nothing:1"));
    CHECK_FALSE(h.shell.follow_link(doc, ""));
}

TEST_CASE("a remote range cache that cannot be made is said in the status bar, once, and the model opens") {
    TempDir cache_home;
    std::filesystem::create_directories(cache_home.file("modellens"));
    std::ofstream(cache_home.file("modellens/http")) << "a file where the folder goes";
    test::ScopedEnv xdg("XDG_CACHE_HOME", cache_home.path());
    test::LoopbackServer server;
    REQUIRE(server.serve_file("/q4.gguf", std::string(MLENS_DEMO_DIR) + "/tiny-llama-q4_0.gguf"));
    ShellHarness h;
    Document& doc = h.open(server.url("/q4.gguf"));
    CHECK(doc.ready());
    h.frames(2);
    CHECK(h.shell.cache_warnings() ==
          std::vector<std::string>{"the cache folder " + cache_home.file("modellens/http") + " cannot be made (Not a directory); remote ranges are not kept"});
}

TEST_CASE("a center tab cut to fit names its whole title and what it shows on hover") {
    ShellHarness h;
    Document& doc = h.open_fixture();
    REQUIRE(doc.ready());
    // The center tab bar: the one with the most tabs.
    const ImGuiTabBar* center = nullptr;
    ImGuiContext& g = *ImGui::GetCurrentContext();
    for (int i = 0; i < g.TabBars.GetMapSize(); ++i)
        if (const ImGuiTabBar* bar = g.TabBars.TryGetMapData(i); bar && (!center || bar->Tabs.Size > center->Tabs.Size)) center = bar;
    REQUIRE(center != nullptr);
    REQUIRE(center->Tabs.Size >= 8);
    const ImGuiTabItem& last = center->Tabs.back();
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(center->BarRect.Min.x + last.Offset + last.Width / 2, (center->BarRect.Min.y + center->BarRect.Max.y) / 2);
    ImGuiWindow* tooltip = nullptr;
    for (int i = 0; i < 60 && !tooltip; ++i) {
        h.frames(1);
        ImGuiWindow* w = ImGui::FindWindowByName("##Tooltip_00");
        if (w && w->WasActive) tooltip = w;
    }
    REQUIRE(tooltip != nullptr);
    // The title and the panel's description, wrapped: more than one line.
    CHECK(tooltip->Size.y > 2 * ImGui::GetFontSize());
    io.MousePos = ImVec2(-1000, -1000);
    h.frames(2);
}
