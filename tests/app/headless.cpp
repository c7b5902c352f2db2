#include "headless.h"

#include <imgui.h>

#include "theme.h"

namespace mlens::test {

HeadlessImGui::HeadlessImGui(float width, float height) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(width, height);
    io.DeltaTime = 1.0f / 60.0f;
    m_fonts.build(1.0f);
    apply_theme(false);
}

HeadlessImGui::~HeadlessImGui() { ImGui::DestroyContext(); }

void HeadlessImGui::frame(const std::function<void()>& draw) {
    if (m_fonts.needs_rebuild()) m_fonts.build(m_fonts.scale());
    ImGui::NewFrame();
    draw();
    ImGui::Render();
}

void HeadlessImGui::window_frame(const char* name, float width, float height, const std::function<void()>& draw,
                                 const std::function<void()>& after) {
    frame([&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImVec2(width, height));
        ImGui::Begin(name);
        draw();
        ImGui::End();
        if (after) after();
    });
}

}  // namespace mlens::test
