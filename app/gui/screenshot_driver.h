// ScreenshotDriver: the --screenshot mode of the window, apart from its frame loop. The loop asks
// it whether to wait for dropped documents and hands it each rendered frame; the driver decides
// when the picture is taken, writes it, prints the documents and gives the exit status.
//
// Contract (window_loop.h states the mode as the user sees it):
//  - awaiting_documents: fewer than `wait_documents` documents exist and nothing is opening or
//    running, so the loop should sleep until an event (a drop) rather than draw.
//  - after_frame, once per rendered frame: a frame is settled when every awaited document is
//    there, nothing is opening or running and the fonts need no rebuild; after `frames`
//    settled frames in a row (at least one) it writes the frame through `write_png` with a
//    guard that keeps it off every open document and the files named on the command line,
//    prints "document STATE [front] PATH" per document and returns 0, or 1 when the PNG could
//    not be written or a document failed to open. Past `timeout_seconds` it prints why and the
//    documents and returns 1. Otherwise nullopt: draw another frame.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "app_shell.h"
#include "mlens/io/safe_file_writer.h"
#include "window_loop.h"

namespace mlens {

class ScreenshotDriver {
public:
    // Writes the frame just rendered as a PNG at `path`, never over what `guard` protects.
    using WritePng = std::function<Status(const std::string& path, OutputGuard guard)>;

    explicit ScreenshotDriver(const WindowOptions& options);

    bool awaiting_documents(AppShell& shell) const;
    std::optional<int> after_frame(AppShell& shell, bool fonts_settled, const WritePng& write_png);

private:
    const WindowOptions& m_options;
    size_t m_wait_documents;
    std::chrono::steady_clock::time_point m_started;
    int m_settled_frames = 0;
};

}  // namespace mlens
