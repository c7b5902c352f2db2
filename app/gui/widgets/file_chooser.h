// FileChooser: a built-in "Open file" window (no desktop portal or toolkit needed).
//
// Contract: lists one folder (folders first, then model files: *.gguf and *.safetensors, or all
// files when asked), hidden entries only on request. Names are escaped for display; paths are
// used as they are. Unreadable folders show their error instead of entries. draw() returns the
// chosen file's path once (double-click, Enter in the path box, or the Open button), or the
// listed folder itself ("Open this folder": a safetensors folder or an Ollama store), and closes.
// open_folder() is the same window choosing a folder to write into (an export's Browse button):
// only folders are listed, a double-click or Open goes into one, and "Choose this folder" returns
// the folder listed; Enter on a typed folder path returns it. open_any_file() opens it with "All
// files" ticked (a tokenizer.json, a text).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlens {

class FileChooser {
public:
    void open(const std::string& folder);
    void open_folder(const std::string& folder);
    void open_any_file(const std::string& folder);
    bool is_open() const { return m_open; }
    std::optional<std::string> draw();
    const std::string& folder() const { return m_folder; }

private:
    struct Entry {
        std::string name;  // raw file name
        std::string shown;  // escaped for display
        bool folder = false;
        uint64_t size = 0;
    };
    void load(const std::string& folder);

    void start(const std::string& folder, bool folders_only);

    bool m_open = false;
    bool m_focus = false;
    bool m_folders_only = false;
    bool m_all_files = false;
    bool m_hidden = false;
    std::string m_folder;
    std::string m_path_input;
    std::string m_error;
    std::vector<Entry> m_entries;
    int m_selected = -1;
};

}  // namespace mlens
