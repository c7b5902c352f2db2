// CliJob: the JobContext of one long analysis of a subcommand (stats, hist, compare, requant,
// diff --numeric).
//
// Contract: while a CliJob lives, SIGINT, SIGTERM and SIGHUP (unless ignored, as under nohup)
// cancel its job instead of ending the process: the analysis stops at its next chunk with
// E_CANCELLED, and the command reports "cancelled" and exits 1. When stderr is a terminal, a line
// "LABEL  NN%" is redrawn there four times a second and cleared when the CliJob ends, unless no
// thread can be started for it (start_progress_thread); otherwise nothing is printed. One CliJob
// at a time; the previous signal dispositions come back when it ends. The line ends with what
// remote reads downloaded so far (transfer_text, transfer_progress.h) once there is any.
#pragma once

#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "mlens/job.h"

namespace mlens::cli {

// Whether a CliJob is drawing its progress line now (transfer_progress.h waits meanwhile).
bool cli_job_drawing();

class CliJob {
public:
    explicit CliJob(std::string label);
    ~CliJob();
    CliJob(const CliJob&) = delete;
    CliJob& operator=(const CliJob&) = delete;

    JobContext* job() { return &m_job; }
    // Names the next step of the analysis in the progress line, whose progress starts again at 0.
    void step(const std::string& label);

private:
    void draw_progress();

    JobContext m_job;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::string m_label;
    bool m_done = false;
    std::thread m_progress;
    struct sigaction m_old_int {
    }, m_old_term{}, m_old_hup{};
};

}  // namespace mlens::cli
