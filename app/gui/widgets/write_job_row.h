// The parts a window that writes files as a job shares with every other such window:
//  - write_job_row, its last row: an Export button (enabled when `can_export`), then, while the
//    job runs, its progress bar ("writing…") and a Cancel button, otherwise a Close button, which
//    clears `open`; true when Export was pressed.
//  - WriteOutcome, what the job ended with (taken from its handle by write_outcome), and
//    write_failure_text, which shows a cancelled or failed one.
//
// Contract: cancelling only asks the job to stop; its result still arrives through try_take(). write_failure_text draws nothing and returns false when there is a report.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <imgui.h>

#include "mlens/text/escape.h"
#include "state/job_runner.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens {

template <typename Report>
struct WriteOutcome {
    std::optional<Report> report;
    std::string error;  // escaped; empty on success
    bool cancelled = false;  // E_CANCELLED: nothing was written
};

template <typename Report>
std::shared_ptr<WriteOutcome<Report>> write_outcome(Result<Report> taken) {
    auto outcome = std::make_shared<WriteOutcome<Report>>();
    if (taken)
        outcome->report = std::move(taken).value();
    else if (taken.error().code == ErrorCode::E_CANCELLED)
        outcome->cancelled = true;
    else
        outcome->error = escape_for_display(taken.error().to_string(), 600);
    return outcome;
}

}  // namespace mlens

namespace mlens::ui {

template <typename Report>
bool write_failure_text(const WriteOutcome<Report>& o) {
    if (o.cancelled) {
        text_colored(palette().warning, "Cancelled; nothing was written.");
        return true;
    }
    if (o.report) return false;
    ImGui::PushTextWrapPos(0);
    text_colored(palette().error, o.error);
    ImGui::PopTextWrapPos();
    return true;
}

template <typename T>
bool write_job_row(bool can_export, JobHandle<T>& job, bool& open) {
    ImGui::BeginDisabled(!can_export);
    const bool pressed = ImGui::Button("Export");
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (job) {
        ImGui::ProgressBar(static_cast<float>(job.progress()), ImVec2(260, 0), "writing\xE2\x80\xA6");
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) job.cancel();
    } else if (ImGui::Button("Close")) {
        open = false;
    }
    return pressed;
}

}  // namespace mlens::ui
