// The workspace panel tests open their documents in: a headless ImGui context, settings, a job
// runner and a Workspace. open_all opens files and returns once every one is ready (REQUIREd);
// frames_until_jobs_done draws frames until the jobs they start have finished.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "headless.h"
#include "panels/panel.h"
#include "state/workspace.h"

namespace mlens::test {

struct WorkspaceHarness {
    HeadlessImGui imgui;
    Settings settings;
    JobRunner jobs;
    Workspace workspace{jobs, settings};

    std::vector<Document*> open_all(const std::vector<std::string>& paths) {
        std::vector<Document*> docs;
        for (const std::string& p : paths) docs.push_back(&workspace.open(p));
        jobs.wait_all();
        workspace.poll();
        for (Document* d : docs) REQUIRE(d->ready());
        return docs;
    }
    Document& open_ready(const std::string& path) { return *open_all({path}).front(); }
    PanelContext context_of(Document& doc) { return PanelContext{doc, jobs, imgui.fonts(), &workspace}; }
    // `rounds` times: `frame`, then wait for every job; then `frame` once more, which shows the
    // results. (A change made during a frame may start its job only on the next one.)
    template <class Frame>
    void frames_until_jobs_done(int rounds, Frame frame) {
        for (int i = 0; i < rounds; ++i) {
            frame();
            jobs.wait_all();
        }
        frame();
    }
};

}  // namespace mlens::test
