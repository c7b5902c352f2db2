#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "headless.h"
#include "state/settings.h"

using namespace mlens;

TEST_CASE("settings round-trip and keep recent files unique and bounded") {
    test::TempDir dir;
    Settings s;
    for (int i = 0; i < 20; ++i) s.add_recent("/m/" + std::to_string(i) + ".gguf");
    s.add_recent("/m/5.gguf");
    CHECK(s.recent_files.size() == Settings::kMaxRecent);
    CHECK(s.recent_files.front() == "/m/5.gguf");
    CHECK(std::count(s.recent_files.begin(), s.recent_files.end(), "/m/5.gguf") == 1);
    s.window_width = 1234;
    s.light_theme = true;
    s.panel_visible["tokenizer"] = false;
    s.left_pane = {333.0f, true};
    auto file = std::filesystem::path(dir.path()) / "sub" / "settings.json";
    REQUIRE(s.save(file, OutputGuard{}));
    Settings r = Settings::load(file);
    CHECK(r.recent_files == s.recent_files);
    CHECK(r.window_width == 1234);
    CHECK(r.light_theme);
    CHECK_FALSE(r.panel_shown("tokenizer"));
    CHECK(r.panel_shown("tensors"));
    CHECK(r.left_pane.width == 333.0f);
    CHECK(r.left_pane.collapsed);
    CHECK(r.right_pane.width == 0.0f);
    CHECK_FALSE(r.right_pane.collapsed);
}

TEST_CASE("malformed settings give defaults") {
    test::TempDir dir;
    auto file = std::filesystem::path(dir.file("settings.json"));
    std::ofstream(file) << "{\"window_width\": \"wide\", \"recent_files\": 7, \"light_theme\": true";
    Settings s = Settings::load(file);
    CHECK(s.window_width == Settings{}.window_width);
    CHECK(s.recent_files.empty());
    std::ofstream(file) << "{\"window_width\": 5, \"light_theme\": true}";
    s = Settings::load(file);
    CHECK(s.window_width == 400);
    CHECK(s.light_theme);
    CHECK(Settings::load(dir.file("missing.json")).recent_files.empty());
    std::ofstream(file) << "{\"left_pane\": {\"width\": -5, \"collapsed\": true}, \"right_pane\": 7}";
    s = Settings::load(file);
    CHECK(s.left_pane.width == 0.0f);
    CHECK(s.left_pane.collapsed);
    CHECK(s.right_pane.width == 0.0f);
    CHECK_FALSE(s.right_pane.collapsed);
}

TEST_CASE("the config folder follows XDG_CONFIG_HOME") {
    const char* old = std::getenv("XDG_CONFIG_HOME");
    std::string saved = old ? old : "";
    setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1);
    CHECK(Settings::config_dir() == std::filesystem::path("/tmp/xdg-test/modellens"));
    setenv("XDG_CONFIG_HOME", "", 1);
    CHECK(Settings::config_dir().filename() == "modellens");
    CHECK(Settings::config_dir().parent_path().filename() == ".config");
    if (old)
        setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
    else
        unsetenv("XDG_CONFIG_HOME");
}
