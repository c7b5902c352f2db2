#include "app_shell.h"

#include <algorithm>
#include <cfloat>
#include <utility>

#include <imgui.h>

#include "document_notice.h"
#include "mlens/text/escape.h"
#include "mlens/text/plural.h"
#include "state/output_inputs.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

AppShell::AppShell(Settings& settings, JobRunner& jobs, FontSet& fonts, ShellOptions options)
    : m_settings(settings),
      m_jobs(jobs),
      m_fonts(fonts),
      m_options(std::move(options)),
      m_workspace(jobs, settings),
      m_demo_files(gguf_files_in(m_options.demo_dir)),
      m_show_shortcuts(m_options.start_select == "help:shortcuts"),
      m_show_panel_guide(m_options.start_select == "help:panels") {}

void AppShell::open(const std::string& path, bool bring_forward) {
    uint64_t previous = m_workspace.active() ? m_workspace.active()->id : 0;
    Document& doc = m_workspace.open(path);
    if (bring_forward) {
        m_select_tab = doc.id;
    } else if (previous != 0) {
        m_workspace.activate(previous);
    }
}

void AppShell::open_all(const std::vector<std::string>& paths) {
    for (size_t i = 0; i < paths.size(); ++i) open(paths[i], i == 0);
}

std::string AppShell::window_title() {
    Document* doc = m_workspace.active();
    return doc ? doc->title + " \xE2\x80\x94 ModelLens" : "ModelLens";
}

void AppShell::save_settings() {
    if (!m_options.settings_path.empty()) m_settings.save(m_options.settings_path, gui_output_guard(nullptr, &m_workspace));
}

std::vector<std::unique_ptr<Panel>>& AppShell::panels_for(const Document& doc) {
    auto& panels = m_panels[doc.id];
    if (panels.empty())
        for (const PanelInfo& info : panel_registry()) panels.push_back(info.make());
    return panels;
}

void AppShell::close_document(uint64_t id) {
    const Document* doc = m_workspace.find(id);
    if (doc && doc->edits.dirty()) {
        m_confirm_close = id;
        return;
    }
    discard_and_close(id);
}

void AppShell::close_confirmation() {
    const Document* doc = m_workspace.find(m_confirm_close);
    if (!doc) {
        m_confirm_close = 0;
        return;
    }
    const char* popup = "Discard staged edits?###confirm_close";
    if (!ImGui::IsPopupOpen(popup)) ImGui::OpenPopup(popup);
    if (!ImGui::BeginPopupModal(popup, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    const size_t staged = doc->edits.edits().edits.size();
    ui::text(doc->title + " has " + plural(staged, "metadata edit that was", "metadata edits that were") + " not saved.");
    ui::text_dim("Save As\xE2\x80\xA6 in the Metadata panel writes them to a new file.");
    if (ImGui::Button("Discard and close")) {
        const uint64_t id = std::exchange(m_confirm_close, 0);
        ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
        discard_and_close(id);
        return;
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) {
        m_confirm_close = 0;
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
}

void AppShell::discard_and_close(uint64_t id) {
    m_workspace.close(id);
    m_panels.erase(id);
    std::erase(m_started, id);
}

bool AppShell::follow_link(Document& doc, std::string_view link) {
    const PanelInfo* taker = route_link(link, doc, panels_for(doc));
    if (taker) doc.focus_panel = taker->id;
    return taker != nullptr;
}

void AppShell::apply_start_options(Document& doc) {
    const std::string& name = m_options.start_select;
    if (!name.empty()) follow_link(doc, name);
    if (!doc.is_model()) return;  // a store's or imatrix's panels took a model or entry name
    const Model& m = *doc.model();
    for (size_t i = 0; i < m.tensors.size() && !name.empty(); ++i)
        if (m.tensors[i].name == name) doc.select({SelectionKind::tensor, i}, "tensors");
    for (size_t i = 0; i < m.metadata.size() && !name.empty(); ++i)
        if (m.metadata[i].key == name) doc.select({SelectionKind::metadata, i}, "metadata");
    // An explicit panel wins over the one the selection brings forward.
    if (find_panel(m_options.start_panel)) doc.focus_panel = m_options.start_panel;
}

void AppShell::route_pending_links(Document& doc) {
    // A taker may post further links; each round takes the ones posted before it.
    while (!doc.pending_links.empty()) {
        std::vector<std::string> links = std::exchange(doc.pending_links, {});
        for (const std::string& link : links) follow_link(doc, link);
    }
}

void AppShell::on_documents_changed() {
    bool opened = false;
    for (const auto& doc : m_workspace.documents()) {
        if (!doc->ready() || std::find(m_started.begin(), m_started.end(), doc->id) != m_started.end()) continue;
        m_started.push_back(doc->id);
        opened = true;
        if (const auto& index = doc->index()) m_fonts.want(index->code_points, index->mono_code_points);
        apply_start_options(*doc);
    }
    if (opened) save_settings();
}

void AppShell::shortcuts() {
    if (ui::ctrl_pressed('O')) m_chooser.open(m_settings.last_folder);
    if (ui::ctrl_pressed('W'))
        if (Document* doc = m_workspace.active()) close_document(doc->id);
    if (ui::ctrl_pressed('Q')) m_quit = true;
}

void AppShell::frame() {
    if (m_workspace.poll()) on_documents_changed();
    m_jobs.reap();
    shortcuts();
    if (Document* doc = m_workspace.active()) route_pending_links(*doc);

    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
        ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoNavFocus;
    ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0.0f);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(6, 4));
    ImGui::Begin("ModelLens##main", nullptr, flags);
    ImGui::PopStyleVar(3);
    menu_bar();
    float status_h = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.y;
    if (m_workspace.documents().empty()) {
        welcome(ImGui::GetContentRegionAvail().y - status_h);
    } else {
        document_tabs();
        if (Document* doc = m_workspace.active()) document_body(*doc, ImGui::GetContentRegionAvail().y - status_h);
    }
    status_bar();
    ImGui::End();

    if (Document* doc = m_workspace.active(); doc && doc->ready()) {
        PanelContext ctx{*doc, m_jobs, m_fonts, &m_workspace};
        for (auto& panel : panels_for(*doc)) panel->draw_windows(ctx);
    }
    if (Document* doc = m_workspace.active()) route_pending_links(*doc);
    if (auto path = m_chooser.draw()) {
        m_settings.last_folder = m_chooser.folder();
        open(*path);
    }
    about_window();
    if (m_confirm_close) close_confirmation();
    if (auto url = m_open_url.draw(m_settings.recent_files)) open(*url);
    help_windows();
}

void AppShell::document_tabs() {
    ImGuiTabBarFlags flags = ImGuiTabBarFlags_Reorderable | ImGuiTabBarFlags_AutoSelectNewTabs | ImGuiTabBarFlags_FittingPolicyScroll |
        ImGuiTabBarFlags_TabListPopupButton;
    if (!ImGui::BeginTabBar("documents", flags)) return;
    std::vector<uint64_t> to_close;
    for (const auto& doc : m_workspace.documents()) {
        bool open = true;
        std::string label = doc->title;
        if (doc->state == DocumentState::opening) label += " \xE2\x80\xA6";
        if (doc->state == DocumentState::failed) label = "\xE2\x9C\x96 " + label;
        if (doc->edits.dirty()) label += " \xE2\x97\x8F";  // staged metadata edits not saved
        label += "###doc" + std::to_string(doc->id);
        ImGuiTabItemFlags item_flags = doc->id == m_select_tab ? ImGuiTabItemFlags_SetSelected : 0;
        if (ImGui::BeginTabItem(label.c_str(), &open, item_flags)) {
            // A tab asked to come forward only shows once ImGui has switched to it.
            if (m_select_tab == 0 || m_select_tab == doc->id) m_workspace.activate(doc->id);
            if (m_select_tab == doc->id) m_select_tab = 0;
            ImGui::EndTabItem();
        }
        if (ImGui::IsItemHovered()) {
            std::string tip = escape_for_display(doc->path, 400);
            ImGui::SetTooltip("%s", tip.c_str());
        }
        if (!open) to_close.push_back(doc->id);
    }
    if (!m_workspace.find(m_select_tab)) m_select_tab = 0;
    if (ImGui::TabItemButton("+", ImGuiTabItemFlags_Trailing | ImGuiTabItemFlags_NoTooltip)) m_chooser.open(m_settings.last_folder);
    ImGui::EndTabBar();
    for (uint64_t id : to_close) close_document(id);
}

void AppShell::document_body(Document& doc, float height) {
    if (doc.ready()) {
        layout(doc, height);
        return;
    }
    ImGui::BeginChild("doc_state", ImVec2(0, height), false);
    ImGui::Dummy(ImVec2(0, height * 0.3f));
    ImGui::Indent(ImGui::GetContentRegionAvail().x * 0.25f);
    if (doc.state == DocumentState::opening) {
        ui::text("Opening " + doc.title + " \xE2\x80\xA6");
        ui::text_dim(escape_for_display(doc.path, 300));
        if (doc.job) {
            ImGui::ProgressBar(static_cast<float>(doc.job->progress()), ImVec2(320, 0));
            ImGui::SameLine();
            if (ImGui::Button("Cancel")) doc.job->cancel();
        }
    } else if (draw_failed_page(doc)) {
        close_document(doc.id);
    }
    ImGui::EndChild();
}

void AppShell::layout(Document& doc, float height) {
    height -= draw_error_banner(doc);
    float total = ImGui::GetContentRegionAvail().x;
    bool left = false, right = false;
    for (const PanelInfo& p : panel_registry()) {
        if (!m_settings.panel_shown(p.id) || !panel_shows(p, doc)) continue;
        left = left || p.slot == PanelSlot::left;
        right = right || p.slot == PanelSlot::right;
    }
    float split_w = ImGui::GetStyle().ItemSpacing.x;
    // The remembered widths only change when the user drags a splitter (double-click: automatic
    // again); in a narrow window the panes give way without forgetting them.
    PaneWidths w = pane_widths(total, split_w, left, m_settings.left_pane, right, m_settings.right_pane);
    auto drag = [&](const char* id, PaneState& pane, const PaneLimits& limits, float width, float sign) {
        if (pane.collapsed) {
            ImGui::Dummy(ImVec2(split_w, height));
            return;
        }
        if (ui::splitter(id, width, sign, limits.min_width, max_pane_width(limits, total), height)) pane.width = width;
        if (ImGui::IsItemHovered()) {
            if (ImGui::IsMouseDoubleClicked(0)) pane.width = 0.0f;
            ImGui::SetTooltip("Drag to resize \xC2\xB7 double-click for the automatic width");
        }
    };

    if (left) {
        side_pane(PanelSlot::left, doc, m_settings.left_pane, w.left, height);
        ImGui::SameLine(0, 0);
        drag("##split_left", m_settings.left_pane, kLeftPaneLimits, w.left, 1.0f);
        ImGui::SameLine(0, 0);
    }
    ImGui::BeginChild("center_pane", ImVec2(w.center, height), false);
    center_tabs(doc);
    ImGui::EndChild();
    if (right) {
        ImGui::SameLine(0, 0);
        drag("##split_right", m_settings.right_pane, kRightPaneLimits, w.right, -1.0f);
        ImGui::SameLine(0, 0);
        side_pane(PanelSlot::right, doc, m_settings.right_pane, w.right, height);
    }
}

void AppShell::side_pane(PanelSlot slot, Document& doc, PaneState& pane, float width, float height) {
    const bool is_left = slot == PanelSlot::left;
    const char* title = is_left ? "navigator" : "inspector";
    // Arrows point where the pane goes: a collapsed pane opens away from its window edge.
    const char* collapse_arrow = is_left ? "\xE2\x97\x80" : "\xE2\x96\xB6";  // ◀ ▶
    const char* expand_arrow = is_left ? "\xE2\x96\xB6" : "\xE2\x97\x80";
    if (pane.collapsed) {
        ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(2, 4));
        ImGui::BeginChild(is_left ? "left_pane_collapsed" : "right_pane_collapsed", ImVec2(width, height), true);
        if (ImGui::Button(expand_arrow, ImVec2(-FLT_MIN, ImGui::GetContentRegionAvail().y))) pane.collapsed = false;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show the %s", title);
        ImGui::EndChild();
        ImGui::PopStyleVar();
        return;
    }
    ImGui::BeginChild(is_left ? "left_pane" : "right_pane", ImVec2(width, height), true);
    draw_slot(slot, doc, [&] {
        if (ImGui::SmallButton(collapse_arrow)) pane.collapsed = true;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Hide the %s (it stays a strip at the edge)", title);
    });
    ImGui::EndChild();
}

void AppShell::draw_slot(PanelSlot slot, Document& doc, const std::function<void()>& collapse_button) {
    auto& panels = panels_for(doc);
    const auto& registry = panel_registry();
    std::vector<size_t> shown;
    for (size_t i = 0; i < registry.size(); ++i)
        if (registry[i].slot == slot && m_settings.panel_shown(registry[i].id) && panel_shows(registry[i], doc)) shown.push_back(i);
    PanelContext ctx{doc, m_jobs, m_fonts, &m_workspace};
    if (shown.size() == 1) {
        ui::text_colored(palette().dim, registry[shown[0]].title);
        ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - ImGui::GetFrameHeight()));
        collapse_button();
        ImGui::Separator();
        panels[shown[0]]->draw(ctx);
        return;
    }
    collapse_button();
    ImGui::SameLine();
    if (!ImGui::BeginTabBar(slot == PanelSlot::left ? "left_tabs" : "right_tabs")) return;
    for (size_t i : shown) {
        if (ImGui::BeginTabItem(registry[i].title)) {
            panels[i]->draw(ctx);
            ImGui::EndTabItem();
        }
    }
    ImGui::EndTabBar();
}

void AppShell::center_tabs(Document& doc) {
    auto& panels = panels_for(doc);
    const auto& registry = panel_registry();
    if (const PanelInfo* wanted = find_panel(doc.focus_panel))
        if (wanted->slot == PanelSlot::center) m_settings.panel_visible[wanted->id] = true;
    if (!ImGui::BeginTabBar("center_tabs", ImGuiTabBarFlags_Reorderable)) return;
    PanelContext ctx{doc, m_jobs, m_fonts, &m_workspace};
    for (size_t i = 0; i < registry.size(); ++i) {
        const PanelInfo& info = registry[i];
        if (info.slot != PanelSlot::center || !m_settings.panel_shown(info.id) || !panel_shows(info, doc)) continue;
        std::string badge = panels[i]->badge(doc);
        std::string label = std::string(info.title) + (badge.empty() ? "" : " (" + badge + ")") + "###" + info.id;
        ImGuiTabItemFlags flags = doc.focus_panel == info.id ? ImGuiTabItemFlags_SetSelected : 0;
        const bool selected = ImGui::BeginTabItem(label.c_str(), nullptr, flags);
        // Tabs narrow to fit the window and cut their titles: the tooltip says the whole title
        // and what the panel shows.
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
            ui::text(std::string(info.title) + (badge.empty() ? "" : " (" + badge + ")"));
            if (*info.description) ui::text_dim(info.description);
            ImGui::PopTextWrapPos();
            ImGui::EndTooltip();
        }
        if (selected) {
            if (doc.focus_panel == info.id) doc.focus_panel.clear();
            panels[i]->draw(ctx);
            ImGui::EndTabItem();
        }
    }
    const PanelInfo* pending = find_panel(doc.focus_panel);
    if (!pending || pending->slot != PanelSlot::center) doc.focus_panel.clear();
    ImGui::EndTabBar();
}

}  // namespace mlens
