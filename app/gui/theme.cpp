#include "theme.h"

namespace mlens {

namespace {

Palette g_palette;

const Palette kDarkPalette = {
    {0.60f, 0.63f, 0.68f, 1.0f}, {0.45f, 0.70f, 1.00f, 1.0f}, {0.98f, 0.75f, 0.30f, 1.0f},
    {1.00f, 0.42f, 0.42f, 1.0f}, {0.45f, 0.85f, 0.50f, 1.0f}, {0.95f, 0.55f, 0.85f, 1.0f},
    {0.98f, 0.70f, 0.35f, 1.0f}, {0.45f, 0.85f, 0.85f, 1.0f}, {0.85f, 0.55f, 0.10f, 0.22f},
    {0.30f, 0.52f, 0.90f, 1.0f},
};

const Palette kLightPalette = {
    {0.38f, 0.40f, 0.45f, 1.0f}, {0.10f, 0.38f, 0.80f, 1.0f}, {0.70f, 0.42f, 0.00f, 1.0f},
    {0.80f, 0.10f, 0.10f, 1.0f}, {0.10f, 0.55f, 0.20f, 1.0f}, {0.70f, 0.15f, 0.60f, 1.0f},
    {0.75f, 0.35f, 0.00f, 1.0f}, {0.00f, 0.50f, 0.55f, 1.0f}, {1.00f, 0.75f, 0.20f, 0.35f},
    {0.15f, 0.40f, 0.85f, 1.0f},
};

void common_style(ImGuiStyle& s) {
    s.WindowRounding = 4.0f;
    s.ChildRounding = 3.0f;
    s.FrameRounding = 3.0f;
    s.PopupRounding = 3.0f;
    s.TabRounding = 3.0f;
    s.GrabRounding = 3.0f;
    s.ScrollbarRounding = 4.0f;
    s.WindowPadding = ImVec2(8, 8);
    s.FramePadding = ImVec2(6, 3);
    s.ItemSpacing = ImVec2(8, 5);
    s.CellPadding = ImVec2(6, 2);
    s.IndentSpacing = 16.0f;
    s.ScrollbarSize = 13.0f;
    s.WindowBorderSize = 1.0f;
    s.ChildBorderSize = 1.0f;
    s.TabBorderSize = 0.0f;
}

}  // namespace

void apply_theme(bool light, float scale) {
    ImGuiStyle style;
    if (light) {
        ImGui::StyleColorsLight(&style);
        ImVec4* c = style.Colors;
        c[ImGuiCol_WindowBg] = ImVec4(0.97f, 0.97f, 0.98f, 1.0f);
        c[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
        c[ImGuiCol_MenuBarBg] = ImVec4(0.90f, 0.91f, 0.93f, 1.0f);
        c[ImGuiCol_TableHeaderBg] = ImVec4(0.86f, 0.88f, 0.92f, 1.0f);
        c[ImGuiCol_TableRowBgAlt] = ImVec4(0.0f, 0.0f, 0.0f, 0.035f);
        c[ImGuiCol_FrameBg] = ImVec4(0.91f, 0.92f, 0.94f, 1.0f);
        c[ImGuiCol_Border] = ImVec4(0.0f, 0.0f, 0.0f, 0.18f);
        g_palette = kLightPalette;
    } else {
        ImGui::StyleColorsDark(&style);
        ImVec4* c = style.Colors;
        c[ImGuiCol_WindowBg] = ImVec4(0.105f, 0.11f, 0.125f, 1.0f);
        c[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
        c[ImGuiCol_PopupBg] = ImVec4(0.13f, 0.14f, 0.16f, 0.98f);
        c[ImGuiCol_MenuBarBg] = ImVec4(0.14f, 0.15f, 0.17f, 1.0f);
        c[ImGuiCol_Border] = ImVec4(0.25f, 0.27f, 0.31f, 0.70f);
        c[ImGuiCol_FrameBg] = ImVec4(0.17f, 0.18f, 0.21f, 1.0f);
        c[ImGuiCol_FrameBgHovered] = ImVec4(0.22f, 0.24f, 0.28f, 1.0f);
        c[ImGuiCol_FrameBgActive] = ImVec4(0.26f, 0.29f, 0.34f, 1.0f);
        c[ImGuiCol_TitleBg] = ImVec4(0.12f, 0.13f, 0.15f, 1.0f);
        c[ImGuiCol_TitleBgActive] = ImVec4(0.16f, 0.20f, 0.27f, 1.0f);
        c[ImGuiCol_Header] = ImVec4(0.20f, 0.33f, 0.52f, 0.55f);
        c[ImGuiCol_HeaderHovered] = ImVec4(0.24f, 0.40f, 0.62f, 0.70f);
        c[ImGuiCol_HeaderActive] = ImVec4(0.26f, 0.45f, 0.70f, 0.85f);
        c[ImGuiCol_Tab] = ImVec4(0.15f, 0.17f, 0.20f, 1.0f);
        c[ImGuiCol_TabHovered] = ImVec4(0.26f, 0.42f, 0.64f, 1.0f);
        c[ImGuiCol_TabActive] = ImVec4(0.21f, 0.33f, 0.50f, 1.0f);
        c[ImGuiCol_TabUnfocused] = ImVec4(0.13f, 0.14f, 0.17f, 1.0f);
        c[ImGuiCol_TabUnfocusedActive] = ImVec4(0.18f, 0.25f, 0.36f, 1.0f);
        c[ImGuiCol_TableHeaderBg] = ImVec4(0.16f, 0.18f, 0.22f, 1.0f);
        c[ImGuiCol_TableBorderStrong] = ImVec4(0.27f, 0.29f, 0.34f, 1.0f);
        c[ImGuiCol_TableBorderLight] = ImVec4(0.20f, 0.22f, 0.26f, 1.0f);
        c[ImGuiCol_TableRowBgAlt] = ImVec4(1.0f, 1.0f, 1.0f, 0.025f);
        c[ImGuiCol_Separator] = ImVec4(0.25f, 0.27f, 0.31f, 1.0f);
        g_palette = kDarkPalette;
    }
    common_style(style);
    // Light frames need an outline to stand out from the light window background.
    style.FrameBorderSize = light ? 1.0f : 0.0f;
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
}

const Palette& palette() { return g_palette; }

ImU32 sequential_color(double t) {
    // Opacity from 0.08 to 0.78: the lightest cells stay distinct from empty ones, and text keeps
    // its contrast on the darkest in both themes.
    const float clamped = static_cast<float>(t < 0 ? 0 : t > 1 ? 1 : t);
    ImVec4 c = g_palette.magnitude;
    c.w = 0.08f + 0.70f * clamped;
    return ImGui::GetColorU32(c);
}

}  // namespace mlens
