#include "cli_job.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "transfer_progress.h"

namespace mlens::cli {

namespace {

// The job a signal cancels. cancel() is a store to a lock-free atomic, which a handler may do.
std::atomic<JobContext*> g_signalled_job{nullptr};
std::atomic<bool> g_drawing{false};

void cancel_on_signal(int) {
    if (JobContext* job = g_signalled_job.load()) job->cancel();
}

}  // namespace

bool cli_job_drawing() { return g_drawing.load(); }

CliJob::CliJob(std::string label) : m_label(std::move(label)) {
    g_signalled_job.store(&m_job);
    struct sigaction cancel {};
    cancel.sa_handler = cancel_on_signal;
    sigemptyset(&cancel.sa_mask);
    sigaction(SIGINT, &cancel, &m_old_int);
    sigaction(SIGTERM, &cancel, &m_old_term);
    // A closed terminal cancels too, so an export's finished files are not left in its scratch
    // folder; under nohup (SIGHUP ignored) the job runs on.
    sigaction(SIGHUP, nullptr, &m_old_hup);
    if (m_old_hup.sa_handler != SIG_IGN) sigaction(SIGHUP, &cancel, nullptr);
    if (::isatty(STDERR_FILENO)) m_progress = start_progress_thread([this] { draw_progress(); });
}

CliJob::~CliJob() {
    {
        std::lock_guard lock(m_mutex);
        m_done = true;
    }
    m_wake.notify_all();
    if (m_progress.joinable()) m_progress.join();
    sigaction(SIGINT, &m_old_int, nullptr);
    sigaction(SIGTERM, &m_old_term, nullptr);
    sigaction(SIGHUP, &m_old_hup, nullptr);
    g_signalled_job.store(nullptr);
}

void CliJob::step(const std::string& label) {
    std::lock_guard lock(m_mutex);
    m_label = label;
    m_job.report(0.0);
}

void CliJob::draw_progress() {
    std::unique_lock lock(m_mutex);
    g_drawing.store(true);
    while (!m_wake.wait_for(lock, std::chrono::milliseconds(250), [&] { return m_done; }))
        std::fprintf(stderr, "\r\x1b[K%s  %.2f%%%s", m_label.c_str(), 100.0 * m_job.progress(), transfer_text().c_str());
    std::fputs("\r\x1b[K", stderr);
    g_drawing.store(false);
    std::fflush(stderr);
}

}  // namespace mlens::cli
