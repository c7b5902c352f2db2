// TransferProgress: the progress line of remote reads on a terminal.
//
// Contract: while one lives and stderr is a terminal (isatty), a line "downloading  N requests
// X MB" is redrawn four times a second once the run has been downloading (http_totals grew) for
// more than a second; a run that downloads nothing, or finishes sooner, prints nothing. While a
// CliJob draws its own progress line (cli_job_drawing), this one waits: the CliJob's line shows
// the same figures (transfer_text). The line is cleared when the object ends. Otherwise nothing;
// nothing either when no thread can be started for the line (start_progress_thread).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace mlens::cli {

// "  · N requests · X MB" for what this process downloaded; empty when it downloaded nothing.
std::string transfer_text();

// A thread running `draw`, or none (an empty std::thread) when the process cannot start one (a
// thread limit, a tight ulimit -v): the command then runs without its progress line.
std::thread start_progress_thread(std::function<void()> draw);

class TransferProgress {
public:
    TransferProgress();
    ~TransferProgress();
    TransferProgress(const TransferProgress&) = delete;
    TransferProgress& operator=(const TransferProgress&) = delete;

private:
    void draw();

    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_done = false;
    std::thread m_thread;
};

}  // namespace mlens::cli
