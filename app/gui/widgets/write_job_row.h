// The last row of a window that writes files as a job: while the job runs, its progress bar
// ("writing…") and a Cancel button; otherwise a Close button, which clears `open`.
//
// Contract: draws on the current ImGui line (callers put their Export button before it with
// SameLine); cancelling only asks the job to stop, its result still arrives through try_take().
#pragma once

#include <imgui.h>

#include "job_runner.h"

namespace mlens::ui {

template <typename T>
void write_job_row(JobHandle<T>& job, bool& open) {
    if (job) {
        ImGui::ProgressBar(static_cast<float>(job.progress()), ImVec2(260, 0), "writing\xE2\x80\xA6");
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) job.cancel();
    } else if (ImGui::Button("Close")) {
        open = false;
    }
}

}  // namespace mlens::ui
