// TransferProgress: the progress line of remote reads on a terminal.
//
// Contract: while one lives and stderr is a terminal (isatty), a line "downloading  N requests
// X MB" is redrawn four times a second once the run has been downloading (http_totals grew) for
// more than a second; a run that downloads nothing, or finishes sooner, prints nothing. While a
// CliJob draws its own progress line (cli_job_drawing), this one waits: the CliJob's line shows
// the same figures (transfer_text). The line is cleared when the object ends. Otherwise nothing.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace mlens::cli {

// "  · N requests · X MB" for what this process downloaded; empty when it downloaded nothing.
std::string transfer_text();

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
