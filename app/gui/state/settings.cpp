#include "settings.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "mlens/io/safe_file_writer.h"

namespace mlens {

namespace {

template <typename T>
void read_field(const nlohmann::json& j, const char* key, T& out) {
    auto it = j.find(key);
    if (it == j.end()) return;
    try {
        out = it->get<T>();
    } catch (const nlohmann::json::exception&) {
        // A field of the wrong type keeps its default.
    }
}

nlohmann::json pane_json(const PaneState& pane) { return {{"width", pane.width}, {"collapsed", pane.collapsed}}; }

void read_pane(const nlohmann::json& j, const char* key, PaneState& out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_object()) return;
    read_field(*it, "width", out.width);
    read_field(*it, "collapsed", out.collapsed);
    if (!(out.width >= 0.0f && out.width <= 16384.0f)) out.width = 0.0f;
}

}  // namespace

void Settings::add_recent(const std::string& path) {
    remove_recent(path);
    recent_files.insert(recent_files.begin(), path);
    if (recent_files.size() > kMaxRecent) recent_files.resize(kMaxRecent);
}

void Settings::remove_recent(const std::string& path) {
    recent_files.erase(std::remove(recent_files.begin(), recent_files.end(), path), recent_files.end());
}

bool Settings::panel_shown(const std::string& id) const {
    auto it = panel_visible.find(id);
    return it == panel_visible.end() || it->second;
}

std::filesystem::path Settings::config_dir() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg) return std::filesystem::path(xdg) / "modellens";
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home && *home ? home : ".") / ".config" / "modellens";
}

Settings Settings::load(const std::filesystem::path& file) {
    Settings s;
    std::ifstream in(file);
    if (!in) return s;
    std::stringstream buffer;
    buffer << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(buffer.str(), nullptr, false);
    if (!j.is_object()) return s;
    read_field(j, "recent_files", s.recent_files);
    read_field(j, "window_width", s.window_width);
    read_field(j, "window_height", s.window_height);
    read_field(j, "light_theme", s.light_theme);
    read_field(j, "panel_visible", s.panel_visible);
    read_pane(j, "left_pane", s.left_pane);
    read_pane(j, "right_pane", s.right_pane);
    read_field(j, "last_folder", s.last_folder);
    if (s.recent_files.size() > kMaxRecent) s.recent_files.resize(kMaxRecent);
    s.window_width = std::clamp(s.window_width, 400, 16384);
    s.window_height = std::clamp(s.window_height, 300, 16384);
    return s;
}

bool Settings::save(const std::filesystem::path& file, OutputGuard guard) const {
    nlohmann::json j = {{"recent_files", recent_files},        {"window_width", window_width},   {"window_height", window_height},
                        {"light_theme", light_theme},          {"panel_visible", panel_visible}, {"left_pane", pane_json(left_pane)},
                        {"right_pane", pane_json(right_pane)}, {"last_folder", last_folder}};
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    // Paths may hold bytes that are not UTF-8; replace them rather than fail the whole save.
    std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    return write_files_safely(guard, {{file.string(), text.data(), text.size()}}).ok();
}

}  // namespace mlens
