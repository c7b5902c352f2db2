#include "open_url_window.h"

#include <imgui.h>

#include "mlens/remote/remote_url.h"
#include "mlens/text/escape.h"
#include "widgets/ui.h"

namespace mlens {

namespace {

// ImGui's InputText over a std::string that grows as the user types.
int grow_string(ImGuiInputTextCallbackData* data) {
    if (data->EventFlag == ImGuiInputTextFlags_CallbackResize) {
        auto* text = static_cast<std::string*>(data->UserData);
        text->resize(static_cast<size_t>(data->BufTextLen));
        data->Buf = text->data();
    }
    return 0;
}

}  // namespace

std::optional<std::string> OpenUrlWindow::draw(const std::vector<std::string>& recent_files) {
    if (!m_open) return std::nullopt;
    std::optional<std::string> chosen;
    ImGui::SetNextWindowSize(ImVec2(640, 0), ImGuiCond_Appearing);
    if (ImGui::Begin("Open URL", &m_open, ImGuiWindowFlags_NoCollapse)) {
        ui::text_dim("https://\xE2\x80\xA6, hf://OWNER/REPO[@REVISION]/PATH or ollama://[REGISTRY/][NAMESPACE/]MODEL[:TAG]");
        if (m_focus) {
            ImGui::SetKeyboardFocusHere();
            m_focus = false;
        }
        ImGui::SetNextItemWidth(-1);
        const bool entered = ImGui::InputText("##url", m_text.data(), m_text.capacity() + 1,
                                              ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CallbackResize, grow_string, &m_text);
        const bool remote = is_remote_reference(m_text);
        if (!remote && !m_text.empty()) ui::text_dim("not a remote reference: it starts with http://, https://, hf:// or ollama://");
        ImGui::BeginDisabled(!remote);
        if ((ImGui::Button("Open") || entered) && remote) chosen = m_text;
        ImGui::EndDisabled();
        bool any = false;
        for (const std::string& path : recent_files) {
            if (!is_remote_reference(path)) continue;
            if (!any) {
                ImGui::Separator();
                ui::text_dim("Recent");
                any = true;
            }
            if (ImGui::Selectable(escape_for_display(display_url(path), 200).c_str())) chosen = path;
        }
    }
    ImGui::End();
    if (chosen) m_open = false;
    return chosen;
}

}  // namespace mlens
