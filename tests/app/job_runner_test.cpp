#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "job_runner.h"

using namespace mlens;

TEST_CASE("jobs run off the calling thread, report progress, wake the loop and can be cancelled") {
    std::atomic<int> wakes{0};
    JobRunner runner([&] { ++wakes; });
    std::atomic<bool> started{false};
    JobPtr looping = runner.start("loop", [&](JobContext& ctx) {
        started = true;
        while (!ctx.cancelled()) {
            ctx.report(0.25);
            std::this_thread::yield();
        }
    });
    JobPtr quick = runner.start("quick", [](JobContext&) {});
    while (!started) std::this_thread::yield();
    CHECK(runner.busy());
    CHECK(runner.jobs().size() == 2);
    CHECK_FALSE(looping->done());
    looping->cancel();
    runner.wait_all();
    CHECK(looping->done());
    CHECK(looping->cancelled());
    CHECK(quick->done());
    CHECK(quick->progress() == 1.0);
    CHECK_FALSE(runner.busy());
    CHECK(wakes == 2);
}

TEST_CASE("destroying the runner cancels and joins running jobs") {
    JobPtr job;
    {
        JobRunner runner;
        job = runner.start("forever", [](JobContext& ctx) {
            while (!ctx.cancelled()) std::this_thread::yield();
        });
    }
    CHECK(job->done());
    CHECK(job->cancelled());
}
