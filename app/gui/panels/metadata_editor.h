// MetadataEditor: the Metadata panel's editing — a value editor per type, add, delete and rename
// a key, the chat template in a text editor — staged on the document (state/metadata_edits.h) with
// undo and redo, the staged edits listed with their header diff, and Save As… writing a new file
// as a job (edit/edit_write.h) with progress, cancel and its verification.
//
// Contract:
//  - Nothing is written until Save As…: the document's file is never changed. A value is checked
//    against its type when it is staged (the reason shown in the editor, nothing staged); the plan
//    of all staged edits is shown with its error when the planner refuses them.
//  - The value editor takes a key's type from the file (a new key: from the GGUF key table, else
//    the type chosen); text for numbers and strings (a multi-line box for strings), a checkbox for
//    BOOL, JSON for arrays.
//  - The chat template editor previews the text being edited: "Preview" renders the sample
//    conversation with it through llama.cpp (llama_chat_apply_template in a worker that loads
//    only the vocabulary, as a job), showing the prompt or llama.cpp's refusal; a preview of an
//    older text is marked as such.
//  - Save As… defaults to <stem>.edited.<ext> beside the document and never replaces an open
//    document (gui_output_guard); once saved, the staged edits are cleared and the result can be
//    opened as a new tab.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "mlens/edit/edit_write.h"
#include "mlens/infer/tokenizer.h"
#include "panels/panel.h"

namespace mlens {

class MetadataEditor {
public:
    // Buttons on the panel's tool line: Add key…, Chat template…, Undo, Redo, Save As….
    void toolbar(PanelContext& ctx);
    // Items of a row's context menu for metadata entry `entry`.
    void row_menu(PanelContext& ctx, size_t entry);
    // The staged edits and their diff, above the table; nothing when none are staged.
    void staged_view(PanelContext& ctx);
    void draw_windows(PanelContext& ctx);

    // Opens the value editor on a new key, or the chat template editor.
    void open_add(std::string key = {});
    // The chat template editor starts on `text` when given, else on the file's template.
    void open_chat_template(const Document& doc, std::optional<std::string> text = std::nullopt);
    // The Save As… window's Save: writes the staged edits to `path` as a job (headless tests call
    // it directly).
    void save_as(PanelContext& ctx, std::string path);
    bool saving() const { return static_cast<bool>(m_job); }
    // The last save's result, null before one ended.
    const Result<EditOutcome>* save_outcome() const { return m_outcome.get(); }
    // Renders the sample conversation with the chat template text being edited (headless tests
    // call it directly); the last preview, null before one ended.
    void preview_chat_template(PanelContext& ctx);
    bool previewing() const { return static_cast<bool>(m_preview_job); }
    const Result<ChatRender>* preview() const { return m_preview.get(); }

private:
    enum class Mode { closed, set, add, rename, chat_template };
    void editor_window(PanelContext& ctx);
    void save_window(PanelContext& ctx);
    void stage_current(PanelContext& ctx);
    void preview_pane();

    Mode m_mode = Mode::closed;
    std::string m_key;
    std::string m_new_key;
    std::string m_text;
    bool m_bool = false;
    int m_type = 0;  // index into the type choices
    std::string m_problem;

    bool m_save_open = false;
    std::string m_save_path;
    JobHandle<EditOutcome> m_job;
    std::shared_ptr<const Result<EditOutcome>> m_outcome;
    std::string m_saved_path;

    JobHandle<ChatRender> m_preview_job;
    std::shared_ptr<const Result<ChatRender>> m_preview;
    std::string m_preview_text;  // the template text the preview (or the running one) renders
};

}  // namespace mlens
