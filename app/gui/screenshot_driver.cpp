#include "screenshot_driver.h"

#include <algorithm>
#include <cstdio>

#include "mlens/open/reference_inputs.h"
#include "mlens/util/name_table.h"
#include "state/output_inputs.h"

namespace mlens {

namespace {

const char* state_name(DocumentState state) {
    static constexpr NameRow<DocumentState> kNames[] = {
        {DocumentState::opening, "opening"}, {DocumentState::ready, "ready"}, {DocumentState::failed, "failed"}};
    return name_of(kNames, state);
}

// What a screenshot shows, for scripts: one line per document tab.
void print_documents(Workspace& workspace) {
    const Document* front = workspace.active();
    for (const auto& doc : workspace.documents())
        std::printf("document %s%s %s\n", state_name(doc->state), doc.get() == front ? " front" : "", doc->path.c_str());
    std::fflush(stdout);
}

}  // namespace

ScreenshotDriver::ScreenshotDriver(const WindowOptions& options)
    : m_options(options),
      m_wait_documents(static_cast<size_t>(std::max(0, options.wait_documents))),
      m_started(std::chrono::steady_clock::now()) {}

bool ScreenshotDriver::awaiting_documents(AppShell& shell) const {
    return shell.workspace().documents().size() < m_wait_documents && !shell.workspace().opening() && !shell.busy();
}

std::optional<int> ScreenshotDriver::after_frame(AppShell& shell, bool fonts_settled, const WritePng& write_png) {
    Workspace& workspace = shell.workspace();
    // Settled: every awaited document there, nothing opening or running (panel jobs such as
    // histograms included).
    const bool settled = workspace.documents().size() >= m_wait_documents && !workspace.opening() && fonts_settled && !shell.busy();
    m_settled_frames = settled ? m_settled_frames + 1 : 0;
    if (m_settled_frames >= std::max(1, m_options.frames)) {
        int result = 0;
        OutputGuard guard = gui_output_guard(nullptr, &workspace);
        for (const std::string& file : m_options.files) add_reference_inputs(guard, file);
        if (Status s = write_png(m_options.screenshot, std::move(guard)); !s) {
            std::fprintf(stderr, "modellens: cannot write the screenshot: %s\n", s.error().to_string().c_str());
            result = 1;
        }
        print_documents(workspace);
        // A script must not take a picture of an error page for the model it asked for.
        for (const auto& doc : workspace.documents())
            if (doc->state == DocumentState::failed) {
                std::fprintf(stderr, "modellens: %s failed to open\n", doc->path.c_str());
                result = 1;
            }
        return result;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
    if (elapsed <= m_options.timeout_seconds) return std::nullopt;
    const size_t open = workspace.documents().size();
    if (open < m_wait_documents)
        std::fprintf(stderr, "modellens: %zu of %zu documents open after %g s\n", open, m_wait_documents, m_options.timeout_seconds);
    else
        std::fprintf(stderr, "modellens: documents did not finish opening in %g s\n", m_options.timeout_seconds);
    print_documents(workspace);
    return 1;
}

}  // namespace mlens
