// modellens: the ModelLens desktop app.
//   modellens [FILES...]
//   modellens --screenshot OUT.png [--frames N] [--size WxH] [--panel NAME] [--select NAME]
//             [--wait-documents N] [--timeout S] FILES...
// --select infer:VIEW opens the Inference panel, loads the first file into llama.cpp and runs VIEW
// (tokenizer, generate, layers, ab, corpus, divergence, memory, console) on its default input; ab,
// corpus and divergence compare with the second file; infer:corpus:TEXT scores the text file TEXT.
// --select error:FILE opens the Model error panel and compares every tensor with the open file
// named FILE (its file name, as its tab shows it, or its path).
#include <cstdio>
#include <new>
#include <string>
#include <system_error>

#include <CLI/CLI.hpp>

#include "cli_reference.h"
#include "mlens/io/owner_stamp.h"
#include "mlens/util/build_info.h"
#include "mlens/util/out_of_memory.h"
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

// The man page's text beyond the options (cli_reference.h renders it with them).
mlens::ProgramReference modellens_reference() {
    mlens::ProgramReference r;
    r.name = "modellens";
    r.version = mlens::modellens_version();
    r.description =
        "ModelLens is a desktop inspector and debugger for LLM model files: GGUF files, safetensors files and "
        "folders, and Ollama model stores. Each file opens in a tab with its metadata, tensors, tokenizer, "
        "diagnostics and weight statistics; two models can be compared tensor by tensor, and a model can be run "
        "through llama.cpp. With no FILES it opens the demo models installed with it. The screenshot options render "
        "the window to a PNG and exit, for documentation and tests.";
    r.sections.push_back({"Exit status",
                          {{"0", "the window was closed, or the screenshot was written"},
                           {"1", "the screenshot could not be written or the documents did not open in time"},
                           {"2", "usage error"}}});
    r.sections.push_back({"Files",
                          {{"~/.config/modellens/", "settings.json and the window layout (imgui.ini); $XDG_CONFIG_HOME is honoured"},
                           {"PREFIX/share/modellens/demo/", "the demo models opened when no file is given"}}});
    r.see_also = {"mlens(1)"};
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    mlens::print_temp_notices("modellens");
    CLI::App app{"modellens \xE2\x80\x94 inspect and debug LLM model files (GGUF, safetensors, Ollama stores)"};
    app.set_version_flag("--version", mlens::version_text("modellens"));
    mlens::WindowOptions options;
    std::string size;
    std::string panels;
    for (const mlens::PanelInfo& p : mlens::panel_registry())
        if (p.slot == mlens::PanelSlot::center) panels += std::string(panels.empty() ? "" : ", ") + p.id;
    app.add_option("FILES", options.files, "Model files to open (default: the demo models)");
    app.add_option("--screenshot", options.screenshot, "Render, write the window to this PNG and exit");
    app.add_option("--frames", options.frames, "Frames to render after files opened (screenshot mode)")->check(CLI::Range(1, 1000));
    app.add_option("--wait-documents", options.wait_documents,
                   "Screenshot mode: wait until this many documents are open (files dropped on the window count)")
        ->check(CLI::Range(1, 1000));
    app.add_option("--timeout", options.timeout_seconds, "Screenshot mode: seconds to wait before failing (600)")
        ->check(CLI::Range(1.0, 86400.0));
    app.add_option("--size", size, "Window size WxH, e.g. 1600x1000");
    app.add_option("--panel", options.panel, "Center panel to show: " + panels);
    app.add_option(
        "--select", options.select,
        "Tensor name (also an imatrix entry), metadata key, token:ID, store model (tiny-moe:int4) to show, or infer:VIEW to load the "
        "model and run an Inference view (" +
            std::string(mlens::inference_tab_names()) +
            "; ab, corpus and divergence compare with the second file; infer:corpus:TEXT scores the text file TEXT), or error:FILE to "
            "compare every tensor with the open file FILE, or requant:TENSOR to show TENSOR in Weights and run its Requantize tab, or "
            "health:verify-blobs to verify the blobs of a model opened from an Ollama registry, or help:shortcuts / help:panels to open "
            "that Help "
            "window");
    app.add_option("--theme", options.theme, "dark or light")->check(CLI::IsMember({"dark", "light"}));
    app.footer(mlens::help_footer(modellens_reference().sections));
    // `modellens --reference man|bash|zsh|fish` (not in --help): the man page or a completion
    // script written from these same definitions; the build installs what it prints.
    if (argc == 3 && std::string(argv[1]) == "--reference") {
        const std::optional<std::string> document = mlens::reference_document(app, modellens_reference(), argv[2]);
        if (document) std::fputs(document->c_str(), stdout);
        return document ? 0 : 2;
    }
    CLI11_PARSE(app, argc, argv);
    if (!size.empty() && !parse_size(size, options.width, options.height)) {
        std::fprintf(stderr, "modellens: --size wants WxH between 200x150 and 16384x16384, got '%s'\n", size.c_str());
        return 2;
    }
    if (options.select.starts_with("infer:") && !mlens::parse_inference_request(options.select.substr(6))) {
        std::fprintf(stderr, "modellens: unknown inference view '%s' (one of: %s)\n", options.select.substr(6).c_str(),
                     mlens::inference_tab_names());
        return 2;
    }
    if (!options.panel.empty() && !mlens::find_panel(options.panel)) {
        std::fprintf(stderr, "modellens: unknown panel '%s' (one of: %s)\n", options.panel.c_str(), panels.c_str());
        return 2;
    }
    // A process that cannot start its job threads or get the memory it needs (a thread limit, a
    // tight ulimit -v) says why and exits 1 rather than ending by abort.
    try {
        return mlens::run_window(options);
    } catch (const std::system_error& e) {
        // A thread that cannot start for want of resources (its stack under ulimit -v, or a
        // thread limit) is the same answer as a failed allocation.
        if (e.code() == std::errc::resource_unavailable_try_again)
            std::fprintf(stderr, "modellens: error: %s\n",
                         mlens::out_of_memory_error("starting a thread of the window").to_string().c_str());
        else
            std::fprintf(stderr, "modellens: error: %s\n", e.what());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "modellens: error: %s\n", mlens::out_of_memory_error("running the window").to_string().c_str());
    }
    return 1;
}
