#include "window_loop.h"

#include <algorithm>
#include <cfloat>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>

#include "app_shell.h"
#include "capture.h"
#include "mlens/io/safe_file_writer.h"
#include "mlens/text/escape.h"
#include "mlens/util/out_of_memory.h"
#include "mlens/util/program_files.h"
#include "screenshot_driver.h"
#include "state/output_inputs.h"
#include "theme.h"

namespace mlens {

namespace {

constexpr double kProgressWakeSeconds = 0.05;
constexpr double kTypingWakeSeconds = 0.5;
constexpr double kIdleWakeSeconds = 5.0;
constexpr int kFramesAfterWake = 2;

// Set by SIGINT/SIGTERM so the loop ends normally and the settings get saved.
volatile std::sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

void glfw_error(int code, const char* message) { std::fprintf(stderr, "modellens: GLFW error %d: %s\n", code, message); }

void on_drop(GLFWwindow* window, int count, const char** paths) {
    auto* shell = static_cast<AppShell*>(glfwGetWindowUserPointer(window));
    shell->open_all(std::vector<std::string>(paths, paths + count));
}

// Writes framebuffer pixels [x, x + width) × [y, y + height) (y from the bottom) as a PNG, never
// over the files of an open document.
Status write_screenshot(const std::string& path, OutputGuard guard, int width, int height, int x = 0, int y = 0) {
    std::vector<unsigned char> pixels(static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(x, y, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    // OpenGL's rows run bottom-up; PNG rows top-down. The window has no meaningful alpha.
    std::vector<unsigned char> flipped(pixels.size());
    size_t stride = static_cast<size_t>(width) * 4;
    for (int y = 0; y < height; ++y)
        std::copy_n(&pixels[static_cast<size_t>(height - 1 - y) * stride], stride, &flipped[static_cast<size_t>(y) * stride]);
    for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;
    std::vector<unsigned char> png;
    auto append = [](void* context, void* data, int size) {
        auto* out = static_cast<std::vector<unsigned char>*>(context);
        out->insert(out->end(), static_cast<unsigned char*>(data), static_cast<unsigned char*>(data) + size);
    };
    // The encoder fails only when its own allocation does.
    if (!stbi_write_png_to_func(append, &png, width, height, 4, flipped.data(), static_cast<int>(stride)))
        return out_of_memory_error("encoding the PNG for " + escape_for_display(path));
    return write_files_safely(guard, {{path, png.data(), png.size()}});
}

// ImGui's own layout file goes through the same writer as every other file (ImGui would fopen it
// in place); ImGui only reads it.
void save_layout(const std::string& ini_path, const Workspace& workspace) {
    size_t size = 0;
    const char* text = ImGui::SaveIniSettingsToMemory(&size);
    OutputGuard guard = gui_output_guard(nullptr, &workspace);
    if (Status s = write_files_safely(guard, {{ini_path, text, size}}); !s)
        std::fprintf(stderr, "modellens: layout not saved: %s\n", s.error().to_string().c_str());
}

std::string platform_info() {
    const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    const char* version = reinterpret_cast<const char*>(glGetString(GL_VERSION));
    return std::string("GLFW ") + glfwGetVersionString() + "\nOpenGL " + (version ? version : "?") + " \xC2\xB7 " +
        (renderer ? renderer : "?");
}

// The OpenGL 3.3 core window, its context current; null (said on stderr) when there is none.
GLFWwindow* create_window(int width, int height, bool screenshot) {
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
    GLFWwindow* window = glfwCreateWindow(width, height, "ModelLens", nullptr, nullptr);
    if (!window) {
        std::fprintf(stderr, "modellens: cannot create an OpenGL 3.3 core window\n");
        return nullptr;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(screenshot ? 0 : 1);
    return window;
}

// ImGui's allocations: an allocation that fails throws std::bad_alloc (main says E_NO_MEMORY and
// exits 1), where ImGui would use the null pointer or assert.
void* imgui_allocate(size_t size, void*) {
    void* p = std::malloc(size);
    if (!p && size != 0) throw std::bad_alloc();
    return p;
}
void imgui_release(void* p, void*) { std::free(p); }

// Address space the OpenGL driver may still take once the window is up: a software renderer
// (Mesa's llvmpipe) maps memory to compile each shader and ends the process by a fault when that
// mapping fails, so the window starts only with this much free under ulimit -v.
constexpr size_t kDriverHeadroom = size_t{64} << 20;

// ImGui's shaders, buffers and font texture (of the fonts built), made before any document opens: with kDriverHeadroom reserved
// and given back first (std::bad_alloc when it cannot be, which main says as E_NO_MEMORY).
void create_device_objects() {
    if (!address_space_free(kDriverHeadroom)) throw std::bad_alloc();
    ImGui_ImplOpenGL3_CreateDeviceObjects();
}

// ImGui with its GLFW and OpenGL backends; a screenshot neither reads nor writes the layout file.
void init_imgui(GLFWwindow* window, const std::filesystem::path& config, const std::string& ini_path, bool screenshot) {
    IMGUI_CHECKVERSION();
    ImGui::SetAllocatorFunctions(imgui_allocate, imgui_release);
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
    io.IniFilename = nullptr;
    if (!screenshot) {
        std::error_code ec;
        std::filesystem::create_directories(config, ec);
        if (std::filesystem::is_regular_file(ini_path, ec)) ImGui::LoadIniSettingsFromDisk(ini_path.c_str());
    }
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
}

void shut_down(GLFWwindow* window) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
}

// Waits for what the next frame needs: nothing while taking a screenshot of settled documents or
// right after a wake, else events, job progress or a timeout. A screenshot counts only frames
// drawn once nothing opens or runs, so while something does the loop waits for the job's wake
// (or the progress interval) instead of drawing frames that would take the cores from the work.
void wait_for_frame(AppShell& shell, const std::optional<ScreenshotDriver>& driver, bool screenshot, int& frames_left) {
    // Waiting for documents from outside (a drop): nothing to draw until an event comes.
    if (driver && driver->awaiting_documents(shell)) {
        glfwWaitEventsTimeout(kProgressWakeSeconds);
    } else if (screenshot && (shell.workspace().opening() || shell.busy())) {
        glfwWaitEventsTimeout(kProgressWakeSeconds);
    } else if (screenshot || frames_left > 0) {
        glfwPollEvents();
        if (frames_left > 0) --frames_left;
    } else {
        const ImGuiIO& io = ImGui::GetIO();
        glfwWaitEventsTimeout(shell.busy() ? kProgressWakeSeconds : io.WantTextInput ? kTypingWakeSeconds : kIdleWakeSeconds);
        frames_left = kFramesAfterWake;
    }
}

// Draws one frame of the shell into the back buffer; returns the framebuffer's size.
std::pair<int, int> draw_frame(GLFWwindow* window, AppShell& shell, FontSet& fonts, float scale, bool screenshot) {
    if (fonts.needs_rebuild()) {
        fonts.build(scale);
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    // A screenshot shows the window as opened, without hover effects from wherever the
    // pointer happens to be.
    if (screenshot) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
    shell.frame();
    ImGui::Render();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    return {fb_w, fb_h};
}

// Writes the plot capture a panel asked for this frame, if any, and tells the panel how it went.
void serve_capture(int fb_w, int fb_h) {
    std::optional<CaptureRequest> capture = take_capture_request();
    if (!capture) return;
    PixelRect r = capture_pixels(capture->min, capture->max, ImGui::GetIO().DisplaySize, fb_w, fb_h);
    Status written = r.w > 0 ? write_screenshot(capture->path, std::move(capture->guard), r.w, r.h, r.x, r.y)
                             : Status(Error{ErrorCode::E_IO, "output", std::nullopt, "the plot is outside the window"});
    set_capture_message(written ? "wrote " + capture->path : "could not write " + capture->path + ": " + written.error().to_string());
}

struct WindowSetup {
    GLFWwindow* window;
    std::filesystem::path config;
    std::string ini_path;
    float scale;
};

// Runs the shell in the window until it closes, is stopped, or the screenshot is taken; returns
// the exit status. Saves the layout and the settings on the way out, except for a screenshot.
int run_shell(const WindowSetup& setup, const WindowOptions& options, Settings& settings, FontSet& fonts) {
    GLFWwindow* window = setup.window;
    const bool screenshot = !options.screenshot.empty();
    JobRunner jobs([] { glfwPostEmptyEvent(); });
    // Installed: PREFIX/share/modellens/demo; in the build folder: its assets/demo.
    const std::string demo_dir = program_file(MLENS_DEMO_INSTALLED, MLENS_DEMO_BUILD_TREE);
    ShellOptions shell_options{options.panel, options.select, screenshot ? std::string() : (setup.config / "settings.json").string(),
                               demo_dir};
    AppShell shell(settings, jobs, fonts, shell_options);
    shell.set_platform_info(platform_info());
    glfwSetWindowUserPointer(window, &shell);
    glfwSetDropCallback(window, on_drop);

    shell.open_all(options.files.empty() ? demo_documents(demo_dir) : options.files);

    int result = 0;
    std::optional<ScreenshotDriver> driver;
    if (screenshot) driver.emplace(options);
    int frames_left = kFramesAfterWake;
    std::string title;
    ImGuiIO& io = ImGui::GetIO();
    while (!glfwWindowShouldClose(window)) {
        wait_for_frame(shell, driver, screenshot, frames_left);
        const auto [fb_w, fb_h] = draw_frame(window, shell, fonts, setup.scale, screenshot);
        serve_capture(fb_w, fb_h);
        if (driver) {
            auto write = [&](const std::string& path, OutputGuard guard) { return write_screenshot(path, std::move(guard), fb_w, fb_h); };
            if (std::optional<int> status = driver->after_frame(shell, !fonts.needs_rebuild(), write)) {
                result = *status;
                break;
            }
        }
        glfwSwapBuffers(window);
        std::string wanted = shell.window_title();
        if (wanted != title) {
            title = wanted;
            glfwSetWindowTitle(window, title.c_str());
        }
        if (shell.quit_requested() || g_stop) glfwSetWindowShouldClose(window, GLFW_TRUE);
        if (io.WantSaveIniSettings && !screenshot) {
            save_layout(setup.ini_path, shell.workspace());
            io.WantSaveIniSettings = false;
        }
    }
    if (!screenshot) {
        save_layout(setup.ini_path, shell.workspace());
        if (!glfwGetWindowAttrib(window, GLFW_MAXIMIZED) && !glfwGetWindowAttrib(window, GLFW_ICONIFIED))
            glfwGetWindowSize(window, &settings.window_width, &settings.window_height);
        shell.save_settings();
    }
    glfwSetWindowUserPointer(window, nullptr);
    return result;
}

}  // namespace

int run_window(const WindowOptions& options) {
    const bool screenshot = !options.screenshot.empty();
    glfwSetErrorCallback(glfw_error);
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    if (!glfwInit()) {
        std::fprintf(stderr, "modellens: cannot initialise GLFW (is a display available?)\n");
        return 1;
    }
    std::filesystem::path config = Settings::config_dir();
    Settings settings = screenshot ? Settings{} : Settings::load(config / "settings.json");
    if (options.theme == "light") settings.light_theme = true;
    if (options.theme == "dark") settings.light_theme = false;
    int width = options.width > 0 ? options.width : settings.window_width;
    int height = options.height > 0 ? options.height : settings.window_height;
    GLFWwindow* window = create_window(width, height, screenshot);
    if (!window) {
        glfwTerminate();
        return 1;
    }
    const std::string ini_path = (config / "imgui.ini").string();
    init_imgui(window, config, ini_path, screenshot);

    float scale_x = 1.0f, scale_y = 1.0f;
    glfwGetWindowContentScale(window, &scale_x, &scale_y);
    float scale = std::max(1.0f, scale_x);
    FontSet fonts;
    fonts.build(scale);
    apply_theme(settings.light_theme, scale);
    create_device_objects();

    int result = run_shell({window, config, ini_path, scale}, options, settings, fonts);
    shut_down(window);
    return result;
}

}  // namespace mlens
