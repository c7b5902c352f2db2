// File → Open URL…: a window with a text field for an http(s)://, hf:// or ollama:// reference and
// the recent remote references (the recent files that are remote, newest first).
//
// Contract: draw() shows the window while it is open and returns the reference to open when the
// user pressed Open or Enter with a remote reference in the field, or clicked a recent one; the
// window closes then. Text that is no remote reference keeps Open disabled with the reason shown.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mlens {

class OpenUrlWindow {
public:
    void open() { m_open = true; m_focus = true; }
    std::optional<std::string> draw(const std::vector<std::string>& recent_files);

private:
    bool m_open = false;
    bool m_focus = false;
    std::string m_text;
};

}  // namespace mlens
