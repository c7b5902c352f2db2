// The desktop window: GLFW + OpenGL 3.3 core + the ImGui backends around an AppShell.
//
// Contract:
//  - run_window opens the window, opens `files` (or, with none, every *.gguf in the demo
//    folder), and runs until the user quits. The loop sleeps in glfwWaitEventsTimeout while idle
//    and wakes when a job finishes (the job runner posts an empty event) or, while jobs run, a
//    few times a second to show progress.
//  - Files and folders dropped on the window open as new documents (one drop like one command
//    line: the first one's tab comes forward). SIGINT and SIGTERM end the loop like File > Quit
//    (within the idle wake interval), so settings are still saved.
//  - Outside screenshot mode, settings and ImGui's layout file live in Settings::config_dir().
//  - Screenshot mode (`screenshot` not empty) neither reads nor writes settings; it waits until
//    at least `wait_documents` documents exist (those opened later, e.g. dropped on the window,
//    count) and every document finished opening, renders `frames` more frames, writes the last
//    one to the PNG and returns 0; 1 when the PNG could not be written or `timeout_seconds`
//    passed first. Either way it then prints one line per document to stdout,
//    "document STATE [front] PATH" with STATE opening, ready or failed and "front" on the tab shown.
#pragma once

#include <string>
#include <vector>

namespace mlens {

struct WindowOptions {
    std::vector<std::string> files;
    std::string screenshot;
    int frames = 3;
    int width = 0;  // 0: the remembered size
    int height = 0;
    std::string panel;
    std::string select;
    std::string theme;  // "dark", "light" or empty (remembered)
    int wait_documents = 0;  // screenshot mode: documents to wait for
    double timeout_seconds = 600.0;  // screenshot mode: give up after this long
};

int run_window(const WindowOptions& options);

}  // namespace mlens
