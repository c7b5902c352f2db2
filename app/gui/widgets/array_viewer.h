// ArrayViewer: a window listing the elements of one metadata array, however large, with
// virtual scrolling over the lazy ArrayIndex, "go to index" and search.
//
// Contract: only visible rows are read from the file each frame. Strings are shown as token
// pieces (display_text.h) read with `encoding` (the vocabulary's for tokenizer.ggml.tokens, else
// plain), searched in either form (array_search.h); numbers exactly, with the enum name for enum-valued keys. The window
// is identified by `window_id`, so reopening the same array focuses the existing window.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <imgui.h>

#include "mlens/model/value.h"
#include "state/array_search.h"
#include "state/job_runner.h"

namespace mlens {

class ArrayViewer {
public:
    ArrayViewer(std::string key, std::shared_ptr<const ArrayIndex> array, std::string window_id, PieceEncoding encoding);

    // Draws the window; returns false once the user closed it.
    bool draw(JobRunner& jobs, ImFont* mono);
    const std::string& window_id() const { return m_window_id; }
    void focus() { m_focus = true; }

private:
    std::string m_key;
    std::string m_title;
    std::shared_ptr<const ArrayIndex> m_array;
    std::string m_window_id;
    PieceEncoding m_encoding;
    std::string m_query;
    ArraySearch m_search;
    std::optional<uint64_t> m_scroll_to;
    int64_t m_goto = 0;
    bool m_focus = true;
};

}  // namespace mlens
