#include "transfer_progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <system_error>

#include "cli_job.h"
#include "mlens/model/summary.h"
#include "mlens/remote/http_client.h"
#include "mlens/text/plural.h"

namespace mlens::cli {

std::string transfer_text() {
    const HttpTotals http = http_totals();
    if (http.requests == 0) return {};
    return "  \xC2\xB7 " + plural(http.requests, "request") + " \xC2\xB7 " +
           human_bytes(http.bytes);
}

std::thread start_progress_thread(std::function<void()> draw) {
    try {
        return std::thread(std::move(draw));
    } catch (const std::system_error&) {
        return {};
    }
}

TransferProgress::TransferProgress() {
    if (::isatty(STDERR_FILENO)) m_thread = start_progress_thread([this] { draw(); });
}

TransferProgress::~TransferProgress() {
    {
        std::lock_guard lock(m_mutex);
        m_done = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void TransferProgress::draw() {
    using Clock = std::chrono::steady_clock;
    std::unique_lock lock(m_mutex);
    std::optional<Clock::time_point> started;
    bool drawn = false;
    while (!m_wake.wait_for(lock, std::chrono::milliseconds(250), [&] { return m_done; })) {
        if (!started && http_totals().requests > 0) started = Clock::now();
        if (!started || Clock::now() - *started < std::chrono::seconds(1) || cli_job_drawing()) continue;
        std::fprintf(stderr, "\r\x1b[Kdownloading%s", transfer_text().c_str());
        drawn = true;
    }
    if (drawn) std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
}

}  // namespace mlens::cli
