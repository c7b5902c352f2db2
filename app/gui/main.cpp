// modellens: the ModelLens desktop app.
//   modellens [FILES...]
//   modellens --screenshot OUT.png [--frames N] [--size WxH] [--panel NAME] [--select NAME]
//             [--wait-documents N] [--timeout S] FILES...
// --select infer:VIEW opens the Inference panel, loads the first file into llama.cpp and runs VIEW
// (tokenizer, generate, layers, ab, console) on its default input; ab compares with the second file.
// --select error:FILE opens the Model error panel and compares every tensor with the open file
// named FILE (its file name, as its tab shows it, or its path).
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "panels/inference_panel.h"
#include "panels/panel.h"
#include "window_loop.h"

namespace {

bool parse_size(const std::string& text, int& width, int& height) {
    unsigned w = 0, h = 0;
    char tail = 0;
    if (std::sscanf(text.c_str(), "%ux%u%c", &w, &h, &tail) != 2) return false;
    if (w < 200 || h < 150 || w > 16384 || h > 16384) return false;
    width = static_cast<int>(w);
    height = static_cast<int>(h);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"modellens \xE2\x80\x94 inspect and debug LLM model files (GGUF, safetensors, Ollama stores)"};
    app.set_version_flag("--version", std::string("modellens ") + MLENS_VERSION);
    mlens::WindowOptions options;
    std::string size;
    std::string panels;
    for (const mlens::PanelInfo& p : mlens::panel_registry())
        if (p.slot == mlens::PanelSlot::center) panels += std::string(panels.empty() ? "" : ", ") + p.id;
    app.add_option("FILES", options.files, "Model files to open (default: the demo models)");
    app.add_option("--screenshot", options.screenshot, "Render, write the window to this PNG and exit");
    app.add_option("--frames", options.frames, "Frames to render after files opened (screenshot mode)")
        ->check(CLI::Range(1, 1000));
    app.add_option("--wait-documents", options.wait_documents,
                   "Screenshot mode: wait until this many documents are open (files dropped on the window count)")
        ->check(CLI::Range(1, 1000));
    app.add_option("--timeout", options.timeout_seconds, "Screenshot mode: seconds to wait before failing (600)")
        ->check(CLI::Range(1.0, 86400.0));
    app.add_option("--size", size, "Window size WxH, e.g. 1600x1000");
    app.add_option("--panel", options.panel, "Center panel to show: " + panels);
    app.add_option("--select", options.select,
                   "Tensor name (also an imatrix entry), metadata key, token:ID, store model (tiny-moe:int4) to show, or infer:VIEW to load the "
                   "model and run an Inference view (" + std::string(mlens::inference_tab_names()) +
                       "; ab compares with the second file), or error:FILE to compare every tensor with the open file FILE, or help:shortcuts / help:panels to open that Help "
                   "window");
    app.add_option("--theme", options.theme, "dark or light")->check(CLI::IsMember({"dark", "light"}));
    CLI11_PARSE(app, argc, argv);
    if (!size.empty() && !parse_size(size, options.width, options.height)) {
        std::fprintf(stderr, "modellens: --size wants WxH between 200x150 and 16384x16384, got '%s'\n", size.c_str());
        return 2;
    }
    if (options.select.starts_with("infer:") && !mlens::inference_tab_named(options.select.substr(6))) {
        std::fprintf(stderr, "modellens: unknown inference view '%s' (one of: %s)\n", options.select.substr(6).c_str(),
                     mlens::inference_tab_names());
        return 2;
    }
    if (!options.panel.empty() && !mlens::find_panel(options.panel)) {
        std::fprintf(stderr, "modellens: unknown panel '%s' (one of: %s)\n", options.panel.c_str(), panels.c_str());
        return 2;
    }
    return mlens::run_window(options);
}
