#include "widgets/file_chooser.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "mlens/model/summary.h"
#include "mlens/text/escape.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

namespace fs = std::filesystem;

namespace {

std::string home_folder() {
    const char* home = std::getenv("HOME");
    return home && *home ? home : "/";
}

bool is_model_file(const fs::path& p) {
    std::string ext = p.extension().string();
    return ext == ".gguf" || ext == ".safetensors";
}

}  // namespace

void FileChooser::open(const std::string& folder) { start(folder, false); }

void FileChooser::open_folder(const std::string& folder) { start(folder, true); }

void FileChooser::open_any_file(const std::string& folder) {
    m_all_files = true;
    start(folder, false);
}

void FileChooser::start(const std::string& folder, bool folders_only) {
    m_folders_only = folders_only;
    m_open = true;
    m_focus = true;
    std::error_code ec;
    load(!folder.empty() && fs::is_directory(folder, ec) ? folder : home_folder());
}

void FileChooser::load(const std::string& folder) {
    std::error_code ec;
    fs::path abs = fs::absolute(folder, ec).lexically_normal();
    if (ec) abs = folder;
    std::string text = abs.string();
    if (text.size() > 1 && text.back() == '/') text.pop_back();
    m_folder = text;
    m_path_input = m_folder;
    m_entries.clear();
    m_error.clear();
    m_selected = -1;
    fs::directory_iterator it(abs, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
        m_error = escape_for_display(ec.message(), 200);
        return;
    }
    for (fs::directory_iterator end; it != end; it.increment(ec)) {
        if (ec) break;
        const fs::directory_entry& e = *it;
        std::string name = e.path().filename().string();
        if (!m_hidden && !name.empty() && name[0] == '.') continue;
        std::error_code type_ec;
        bool folder_entry = e.is_directory(type_ec);
        if (!folder_entry && (m_folders_only || (!m_all_files && !is_model_file(e.path())))) continue;
        Entry entry{name, escape_for_display(name, 120), folder_entry, 0};
        if (!folder_entry) entry.size = e.file_size(type_ec);
        m_entries.push_back(std::move(entry));
    }
    std::sort(m_entries.begin(), m_entries.end(), [](const Entry& a, const Entry& b) {
        if (a.folder != b.folder) return a.folder;
        return a.name < b.name;
    });
}

std::optional<std::string> FileChooser::draw() {
    if (!m_open) return std::nullopt;
    std::optional<std::string> chosen;
    ImGui::SetNextWindowSize(ImVec2(720, 480), ImGuiCond_FirstUseEver);
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f), ImGuiCond_Appearing,
                            ImVec2(0.5f, 0.5f));
    if (m_focus) {
        ImGui::SetNextWindowFocus();
        m_focus = false;
    }
    const char* title = m_folders_only ? "Choose a folder###folder_chooser" : "Open model file###file_chooser";
    if (!ImGui::Begin(title, &m_open, ImGuiWindowFlags_NoCollapse)) {
        ImGui::End();
        return std::nullopt;
    }
    std::string go_to;
    if (ImGui::Button("\xE2\x86\x91 Up")) go_to = fs::path(m_folder).parent_path().string();
    ImGui::SameLine();
    if (ImGui::Button("Home")) go_to = home_folder();
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputText("##path", &m_path_input, ImGuiInputTextFlags_EnterReturnsTrue)) {
        std::error_code ec;
        if (fs::is_directory(m_path_input, ec) && !m_folders_only)
            go_to = m_path_input;
        else
            chosen = m_path_input;
    }
    if (!m_folders_only) {
        if (ImGui::Checkbox("All files", &m_all_files)) go_to = m_folder;
        ImGui::SameLine();
    }
    if (ImGui::Checkbox("Hidden", &m_hidden)) go_to = m_folder;
    ImGui::SameLine();
    ui::text_dim(m_folders_only ? "showing folders" : m_all_files ? "showing every file" : "showing *.gguf and *.safetensors");

    float footer = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
    if (!m_error.empty()) ui::text_colored(palette().error, m_error);
    ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersInnerV;
    if (ImGui::BeginTable("entries", 2, flags, ImVec2(0, -footer))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed, 90);
        ImGui::TableHeadersRow();
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(m_entries.size()));
        while (clipper.Step()) {
            for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
                const Entry& e = m_entries[static_cast<size_t>(i)];
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::PushID(i);
                std::string label = (e.folder ? "\xE2\x96\xB8 " : "   ") + e.shown + (e.folder ? "/" : "");
                if (e.folder) ImGui::PushStyleColor(ImGuiCol_Text, palette().accent);
                if (ImGui::Selectable(label.c_str(), m_selected == i,
                                      ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick)) {
                    m_selected = i;
                    if (ImGui::IsMouseDoubleClicked(0)) {
                        std::string path = (fs::path(m_folder) / e.name).string();
                        if (e.folder)
                            go_to = path;
                        else
                            chosen = path;
                    }
                }
                if (e.folder) ImGui::PopStyleColor();
                ImGui::PopID();
                ImGui::TableNextColumn();
                if (!e.folder) ui::text_dim(human_bytes(e.size));
            }
        }
        if (m_entries.empty() && m_error.empty()) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ui::text_dim(m_folders_only ? "(no folders here)" : "(no model files here)");
        }
        ImGui::EndTable();
    }
    bool can_open = m_selected >= 0 && static_cast<size_t>(m_selected) < m_entries.size();
    ImGui::BeginDisabled(!can_open);
    if (ImGui::Button("Open", ImVec2(100, 0)) && can_open) {
        const Entry& e = m_entries[static_cast<size_t>(m_selected)];
        std::string path = (fs::path(m_folder) / e.name).string();
        if (e.folder)
            go_to = path;
        else
            chosen = path;
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button(m_folders_only ? "Choose this folder" : "Open this folder")) chosen = m_folder;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(m_folders_only ? "Write into the folder listed" : "A safetensors folder (with its index and shards) or an Ollama store");
    ImGui::SameLine();
    if (ImGui::Button("Cancel", ImVec2(100, 0)) ||
        (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)))
        m_open = false;
    ImGui::End();
    if (!go_to.empty()) load(go_to);
    if (chosen) m_open = false;
    return chosen;
}

}  // namespace mlens
