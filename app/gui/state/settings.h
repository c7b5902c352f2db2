// Settings: what the app remembers between runs (recent files, window size, theme, panels,
// side panes' widths and collapsed state, the file chooser's last folder).
//
// Contract:
//  - Stored as JSON in config_dir()/settings.json, where config_dir() is
//    $XDG_CONFIG_HOME/modellens, or ~/.config/modellens when XDG_CONFIG_HOME is unset or empty.
//  - load() never fails: a missing, unreadable or malformed file (or wrong-typed fields) gives
//    defaults for what could not be read. save() creates the directory and writes through the
//    core's SafeFileWriter (temporary file, checked writes, atomic rename), never over what
//    `guard` lists (the open documents' files); it returns false if that was not possible.
//  - The side panes are stored as "left_pane" / "right_pane" objects {width, collapsed}; a width
//    of 0 (the default) is the automatic width of pane_layout.h.
//  - Recent files keep the most recent first, without duplicates, at most kMaxRecent.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mlens/io/safe_file_writer.h"
#include "pane_layout.h"

namespace mlens {

struct Settings {
    static constexpr size_t kMaxRecent = 12;

    std::vector<std::string> recent_files;
    int window_width = 1500;
    int window_height = 950;
    bool light_theme = false;
    std::map<std::string, bool> panel_visible;  // panel id -> shown; absent means shown
    PaneState left_pane;  // navigator
    PaneState right_pane;  // inspector and bytes
    std::string last_folder;

    void add_recent(const std::string& path);
    void remove_recent(const std::string& path);
    bool panel_shown(const std::string& id) const;

    static std::filesystem::path config_dir();
    static Settings load(const std::filesystem::path& file);
    bool save(const std::filesystem::path& file, OutputGuard guard) const;
};

}  // namespace mlens
