// The parts a window that writes files as a job shares with every other such window:
//  - write_job_row, its last row: an Export button (enabled when `can_export`; `label` names it
//    otherwise, e.g. "Save"), then, while the
//    job runs, its progress bar ("writing…") and a Cancel button, otherwise a Close button, which
//    clears `open`; true when Export was pressed.
//  - write_failure_text, which shows a job's Result when it was cancelled or failed.
//  - fit_next_window: the window opens centred, `width` × `height` but never more than the work
//    area less a margin (a 1366×768 screen holds it whole), and stays resizable; between
//    begin_write_body and end_write_body its body scrolls, leaving room below for write_job_row,
//    which therefore stays visible whatever the body holds.
//
// Contract: cancelling only asks the job to stop; its result still arrives through try_take().
// write_failure_text draws nothing and returns false when the Result holds the report.
#pragma once

#include <imgui.h>

#include <algorithm>

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

inline void fit_next_window(float width, float height) {
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float margin = 24;
    const ImVec2 size(std::min(width, vp->WorkSize.x - 2 * margin), std::min(height, vp->WorkSize.y - 2 * margin));
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f), ImGuiCond_Appearing,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(size, ImGuiCond_Appearing);
    ImGui::SetNextWindowSizeConstraints(ImVec2(std::min(480.0f, size.x), std::min(240.0f, size.y)),
                                        ImVec2(vp->WorkSize.x - margin, vp->WorkSize.y - margin));
}

inline void begin_write_body() {
    const float footer = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
    ImGui::BeginChild("write_body", ImVec2(0, -footer));
}

inline void end_write_body() {
    ImGui::EndChild();
    ImGui::Separator();
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
