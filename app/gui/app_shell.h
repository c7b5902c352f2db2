// AppShell: everything inside the main window — menu bar, document tabs, the navigator /
// center / inspector layout, status bar, welcome screen, file chooser, About and Help windows.
//
// Contract:
//  - frame() draws one frame between ImGui::NewFrame() and ImGui::Render() and needs no window
//    system, so tests drive it headless. It publishes finished open jobs, hands new documents'
//    code points to the FontSet (the window loop rebuilds the atlas between frames), and applies
//    the start options to each document when it becomes ready.
//  - open() starts opening a file or folder without blocking (menu, command line, drag and drop);
//    open_all() opens several at once (command line, one drop) with the first one's tab in front.
//  - The navigator and inspector panes are resizable (splitters) and collapsible; their widths
//    follow pane_layout.h and their state is kept in Settings.
//  - The status bar says "remote cache off" once the remote range cache could not be used
//    (range_cache.h), its reasons on hover; remote reads go on uncached.
//  - Settings changes (recent files, panels, theme, pane widths) are saved to `settings_path`
//    when it is not empty: when a document opens and in save_settings().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "open_url_window.h"
#include "fonts.h"
#include "panels/panel.h"
#include "state/job_runner.h"
#include "state/settings.h"
#include "state/workspace.h"
#include "widgets/file_chooser.h"

namespace mlens {

struct ShellOptions {
    std::string start_panel;  // center panel to show first ("tensors", "tokenizer", ...)
    std::string
        start_select;  // tensor name, metadata key, store model, imatrix entry or a panel's link ("token:ID", "infer:VIEW", "error:FILE",
        // "requant:TENSOR", "weights:TENSOR@expert=E#row=R,block=B", "metadata:GROUP", ...) to show when a document opens;
        // "help:shortcuts" or "help:panels" opens that Help window
    std::string settings_path;  // empty: nothing is saved
    std::string demo_dir;  // folder of demo models offered on the welcome screen
};

class AppShell {
public:
    AppShell(Settings& settings, JobRunner& jobs, FontSet& fonts, ShellOptions options);

    // Starts opening `path`; its tab comes forward unless `bring_forward` is false.
    void open(const std::string& path, bool bring_forward = true);
    void open_all(const std::vector<std::string>& paths);
    void frame();

    Workspace& workspace() { return m_workspace; }
    bool quit_requested() const { return m_quit; }
    // True while any job runs (the window loop then keeps redrawing for progress).
    bool busy() const { return m_jobs.busy(); }
    std::string window_title();
    void set_platform_info(std::string info) { m_platform_info = std::move(info); }
    void save_settings();
    // Hands a link ("token:ID", "requant:TENSOR", ...) to the panel that accepts it and brings that
    // panel forward; false when no panel of the document takes it.
    bool follow_link(Document& doc, std::string_view link);
    // The range cache's warnings gathered so far (the status bar's "remote cache off"), escaped.
    const std::vector<std::string>& cache_warnings() const { return m_cache_warnings; }

private:
    void on_documents_changed();
    void apply_start_options(Document& doc);
    // Follows the links the document's panels posted (Document::follow), in order.
    void route_pending_links(Document& doc);
    void shortcuts();
    void menu_bar();
    void document_tabs();
    void document_body(Document& doc, float height);
    void layout(Document& doc, float height);
    // A side pane: its panels with a collapse button, or, collapsed, a strip that expands it.
    void side_pane(PanelSlot slot, Document& doc, PaneState& pane, float width, float height);
    void draw_slot(PanelSlot slot, Document& doc, const std::function<void()>& collapse_button);
    void center_tabs(Document& doc);
    void welcome(float height);
    void status_bar();
    void about_window();
    // Help → Keyboard shortcuts and Help → What each panel shows (help_windows.cpp).
    void help_windows();
    std::vector<std::unique_ptr<Panel>>& panels_for(const Document& doc);
    // Closes the document, or, when it has staged metadata edits, asks first (close_confirmation).
    void close_document(uint64_t id);
    void discard_and_close(uint64_t id);
    void close_confirmation();

    Settings& m_settings;
    JobRunner& m_jobs;
    FontSet& m_fonts;
    ShellOptions m_options;
    Workspace m_workspace;
    FileChooser m_chooser;
    OpenUrlWindow m_open_url;
    std::map<uint64_t, std::vector<std::unique_ptr<Panel>>> m_panels;
    std::vector<std::string> m_demo_files;
    std::vector<uint64_t> m_started;  // documents the start options were applied to
    uint64_t m_select_tab = 0;  // document tab to bring forward next frame
    uint64_t m_confirm_close = 0;  // document with staged edits whose closing waits for an answer
    std::string m_platform_info;
    // What kept the remote range cache from working (take_range_cache_warnings), gathered each
    // frame: the status bar says "remote cache off" with them on hover.
    std::vector<std::string> m_cache_warnings;
    bool m_show_about = false;
    bool m_show_shortcuts = false;
    bool m_show_panel_guide = false;
    bool m_quit = false;
};

}  // namespace mlens
