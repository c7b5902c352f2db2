// The parts a window that writes files as a job shares with every other such window:
//  - write_job_row, its last row: an Export button (enabled when `can_export`; `label` names it
//    otherwise, e.g. "Save"), then, while the
//    job runs, its progress bar ("writing…") and a Cancel button, otherwise a Close button, which
//    clears `open`; true when Export was pressed.
//  - write_failure_text, which shows a job's Result when it was cancelled or failed.
//
// Contract: cancelling only asks the job to stop; its result still arrives through try_take().
// write_failure_text draws nothing and returns false when the Result holds the report.
#pragma once

#include <imgui.h>

#include "mlens/text/escape.h"
#include "state/job_runner.h"
#include "theme.h"
#include "widgets/ui.h"

namespace mlens::ui {

template <typename Report>
bool write_failure_text(const Result<Report>& outcome) {
    if (outcome) return false;
    if (is_cancelled(outcome.error())) {
        text_colored(palette().warning, "Cancelled; nothing was written.");
        return true;
    }
    ImGui::PushTextWrapPos(0);
    text_colored(palette().error, escape_for_display(outcome.error().to_string(), 600));
    ImGui::PopTextWrapPos();
    return true;
}

template <typename T>
bool write_job_row(bool can_export, JobHandle<T>& job, bool& open, const char* label = "Export") {
    ImGui::BeginDisabled(!can_export);
    const bool pressed = ImGui::Button(label);
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
